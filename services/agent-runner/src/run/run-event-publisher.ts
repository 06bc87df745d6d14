import type { Bus, Subjects } from "@gw/bus";
import type { AgentStream, RunRecord, RunRequest } from "@gw/contracts";
import { encodeAgentEvent } from "@gw/runs";

/**
 * Publishes one run's `agent` events once, on its run subject, numbered from 1 in order. A held
 * publisher keeps its events until release() (then sends them in order) or drop().
 *
 * Events emitted while the runner handles one batch of I/O (a model's chunks read together)
 * leave together, at the end of that batch: one bus write instead of one per chunk. Every bus
 * write wakes the broker and each edge that follows the run, which on a busy host costs more
 * than the event itself (bench/README.md). The terminal event takes whatever is pending with it,
 * at once, so the run's answer never waits.
 */
export class RunEventPublisher {
  private seq = 0;
  private readonly subject: string;
  private held: Uint8Array[] | undefined;
  private pending: Uint8Array[] = [];
  private scheduled: NodeJS.Immediate | undefined;

  private readonly runId: string;
  private readonly sessionKey: string;

  /** `run.edgeId` is the edge that started the run: the subject names it (libs/bus subjects). */
  constructor(
    private readonly bus: Bus,
    subjects: Subjects,
    run: Pick<RunRequest, "runId" | "sessionKey" | "edgeId">,
    opts: { held?: boolean } = {},
  ) {
    this.runId = run.runId;
    this.sessionKey = run.sessionKey;
    this.subject = subjects.runEvents(run.edgeId, run.runId);
    if (opts.held) this.held = [];
  }

  release(): void {
    const held = this.held;
    this.held = undefined;
    for (const data of held ?? []) this.bus.publish(this.subject, data);
  }

  drop(): void {
    if (this.held) this.held = [];
  }

  /** `final`, on the terminal event, is the run's recorded outcome: the edges answer from it. */
  emit(stream: AgentStream, data: Record<string, unknown>, final?: RunRecord): void {
    this.seq += 1;
    const encoded = encodeAgentEvent({ runId: this.runId, stream, data }, { sessionKey: this.sessionKey, seq: this.seq, final });
    if (this.held) {
      this.held.push(encoded);
      return;
    }
    this.pending.push(encoded);
    if (final !== undefined) this.flush();
    else this.scheduled ??= setImmediate(() => this.flush());
  }

  private flush(): void {
    clearImmediate(this.scheduled);
    this.scheduled = undefined;
    const pending = this.pending;
    this.pending = [];
    for (const data of pending) this.bus.publish(this.subject, data);
  }
}
