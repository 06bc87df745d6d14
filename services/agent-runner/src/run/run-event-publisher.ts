import type { Bus, Subjects } from "@gw/bus";
import { type AgentStream, encodeAgentEvent, type RunRecord } from "@gw/runs";

/** Publishes one run's `agent` events once, on its run subject, numbered from 1 in order. */
export class RunEventPublisher {
  private seq = 0;
  private readonly subject: string;

  constructor(
    private readonly bus: Bus,
    subjects: Subjects,
    private readonly runId: string,
    private readonly sessionKey: string,
  ) {
    this.subject = subjects.runEvents(runId);
  }

  /** `final`, on the terminal event, is the run's recorded outcome: the edges answer from it. */
  emit(stream: AgentStream, data: Record<string, unknown>, final?: RunRecord): void {
    this.seq += 1;
    this.bus.publish(
      this.subject,
      encodeAgentEvent({ runId: this.runId, stream, data }, { sessionKey: this.sessionKey, seq: this.seq, final }),
    );
  }
}
