/**
 * A run followed live: its events in `seq` order, each once, across reconnects. After a drop the
 * view subscribes again with `afterSeq: lastSeq` (docs/protocol.md, resuming), and an event the
 * gateway sends twice or late is recognised by its seq and left out. No DOM, so it is tested on
 * its own.
 */
import type { AgentEvent } from "@gw/client";

export type RunState = "following" | "ok" | "error" | "aborted";

/** What an applied event changed, for the view to draw. */
export type RunChange =
  | { kind: "text"; text: string }
  | { kind: "tool"; data: AgentEvent["data"] & { input?: unknown; result?: unknown } }
  | { kind: "end"; state: RunState; error?: string };

export class RunFollow {
  private seen = 0;
  private status: RunState = "following";
  private error: string | undefined;

  constructor(readonly runId: string) {}

  /** The last seq applied: where a new subscription resumes. */
  get lastSeq(): number {
    return this.seen;
  }

  get state(): RunState {
    return this.status;
  }

  get failure(): string | undefined {
    return this.error;
  }

  get ended(): boolean {
    return this.status !== "following";
  }

  /** An `agent` event: what it changes, or undefined for another run's, a repeat, or one after the end. */
  apply(event: AgentEvent): RunChange | undefined {
    if (event.runId !== this.runId || this.ended) return undefined;
    const seq = event.seq ?? this.seen + 1;
    if (seq <= this.seen) return undefined;
    this.seen = seq;
    const { stream, data } = event;
    if (stream === "assistant" && typeof data.text === "string") return { kind: "text", text: data.text };
    if (stream === "tool") return { kind: "tool", data };
    if (stream === "lifecycle" && data.phase === "end") return this.end("ok");
    if (stream === "lifecycle" && data.phase === "error") {
      const aborted = (data as { aborted?: unknown }).aborted === true || data.code === "ABORTED";
      return this.end(aborted ? "aborted" : "error", `${data.code ?? "ERROR"}: ${data.error ?? "the run failed"}`);
    }
    return undefined;
  }

  /** The subscription answered that the run was already over (`subscribed: false`). */
  finishedElsewhere(status: string | undefined): RunChange | undefined {
    if (this.ended) return undefined;
    return this.end(status === "error" ? "error" : "ok", status === "error" ? "the run ended with an error" : undefined);
  }

  private end(state: RunState, error?: string): RunChange {
    this.status = state;
    this.error = error;
    return { kind: "end", state, ...(error === undefined ? {} : { error }) };
  }
}
