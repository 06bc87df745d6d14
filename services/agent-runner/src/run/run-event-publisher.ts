import type { Bus, Subjects } from "@gw/bus";
import type { AgentStream, RunRecord, RunRequest } from "@gw/contracts";
import { agentEventMessage, type RunAddress, runEventSubjects, type RunMessage, terminalMessages } from "@gw/runs";

/**
 * Publishes one run's `agent` events once, numbered from 1 in order, each on the subject of its
 * part (lifecycle, output; the terminal event's record on `final`: agent-events.ts). A held
 * publisher keeps its events until release() (then sends them in order) or drop().
 *
 * Events emitted while the runner handles one batch of I/O (a model's chunks read together)
 * leave together, at the end of that batch: one bus write instead of one per chunk. Every bus
 * write wakes the broker and each edge that follows the run, which on a busy host costs more
 * than the event itself (bench/README.md). Text chunks that follow each other in a batch leave as
 * one `assistant` event (chunks concatenate into the answer: SPEC §6), so a runner that falls
 * behind its models sends fewer, longer events instead of a backlog of small ones; one that keeps
 * up sends each chunk as it came. The terminal event takes whatever is pending with it, at once,
 * so the run's answer never waits.
 *
 * The runs of one process leave in one go: every publisher with pending events is flushed by
 * one shared immediate (`dueBatches`), so the events of all runs whose chunks arrived in one loop
 * turn reach the bus client in one synchronous stretch, which NATS writes to its socket at once.
 * An immediate per run let microtasks run between them, and the client wrote once per run.
 */
export class RunEventPublisher {
  private seq = 0;
  private held: RunMessage[] | undefined;
  /** Events of this batch, numbered and encoded when it leaves (a text chunk may still grow). */
  private pending: Pending[] = [];
  private readonly run: RunAddress;

  /** `run.edgeId` is the edge that started the run: the subject names it (libs/bus subjects). */
  constructor(
    private readonly bus: Bus,
    private readonly subjects: Subjects,
    run: Pick<RunRequest, "runId" | "sessionKey" | "edgeId">,
    opts: { held?: boolean } = {},
  ) {
    const address = { runId: run.runId, sessionKey: run.sessionKey, edgeId: run.edgeId };
    this.run = { ...address, subjects: runEventSubjects(subjects, address) };
    if (opts.held) this.held = [];
  }

  release(): void {
    const held = this.held;
    this.held = undefined;
    for (const m of held ?? []) this.bus.publish(m.subject, m.data);
  }

  drop(): void {
    if (this.held) this.held = [];
  }

  /** `final`, on the terminal event, is the run's recorded outcome: the edges answer from it. */
  emit(stream: AgentStream, data: Record<string, unknown>, final?: RunRecord): void {
    if (this.held) {
      this.held.push(...this.messages({ stream, data, final }));
      return;
    }
    const last = this.pending.at(-1);
    if (final === undefined && last !== undefined && isTextChunk(last) && isTextChunk({ stream, data })) {
      last.data = { ...last.data, text: `${String(last.data.text)}${String(data.text)}` };
      return;
    }
    this.pending.push({ stream, data, final });
    if (final !== undefined) this.flush();
    else dueBatches.add(this);
  }

  /** The next event's messages: numbered in the order they leave. */
  private messages({ stream, data, final }: Pending): RunMessage[] {
    this.seq += 1;
    const event = { runId: this.run.runId, stream, data };
    return final === undefined
      ? [agentEventMessage(this.subjects, this.run, event, this.seq)]
      : terminalMessages(this.subjects, this.run, event, this.seq, final);
  }

  /** Sends the pending events (dueBatches, or the terminal event at once). */
  flush(): void {
    dueBatches.delete(this);
    const pending = this.pending;
    this.pending = [];
    for (const event of pending) for (const m of this.messages(event)) this.bus.publish(m.subject, m.data);
  }
}

/** The publishers with events pending, flushed together at the end of the loop turn. */
class DueBatches {
  private readonly due = new Set<RunEventPublisher>();
  private scheduled: NodeJS.Immediate | undefined;

  add(publisher: RunEventPublisher): void {
    this.due.add(publisher);
    this.scheduled ??= setImmediate(() => this.flushAll());
  }

  delete(publisher: RunEventPublisher): void {
    this.due.delete(publisher);
  }

  private flushAll(): void {
    this.scheduled = undefined;
    const due = [...this.due];
    this.due.clear();
    for (const publisher of due) publisher.flush();
  }
}

const dueBatches = new DueBatches();

interface Pending {
  stream: AgentStream;
  data: Record<string, unknown>;
  final: RunRecord | undefined;
}

/** An `assistant` text chunk with nothing beside its text (SPEC §6: `type`, `text`). */
function isTextChunk(event: Pick<Pending, "stream" | "data">): boolean {
  const { data } = event;
  return event.stream === "assistant" && data.type === "text" && typeof data.text === "string" && Object.keys(data).length === 2;
}
