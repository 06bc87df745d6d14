import type { Output } from "./output.js";

/** One tool call of a run as the CLI reports it (`--json`: the `tools` list). */
export interface ToolCallView {
  toolCallId: string;
  name: string;
  input: unknown;
  result?: unknown;
  error?: string;
}

/** How a run ended, from its last lifecycle event. */
export interface RunEnd {
  phase: "end" | "error";
  code?: string;
  error?: string;
  aborted?: boolean;
}

interface AgentEventPayload {
  runId?: string;
  seq?: number;
  stream?: string;
  data?: Record<string, unknown>;
}

function compact(value: unknown): string {
  const text = JSON.stringify(value ?? {});
  return text.length > 400 ? `${text.slice(0, 399)}…` : text;
}

/**
 * Shows one run's `agent` events as they come: the answer's text as it is written, each tool
 * call (name and input, then its result or error) on lines of its own. Keeps the text, the tool
 * calls, the last `seq` and the end for the command's result.
 */
export class RunPrinter {
  text = "";
  lastSeq = 0;
  readonly tools: ToolCallView[] = [];
  end: RunEnd | undefined;
  private atLineStart = true;

  constructor(
    private readonly out: Output,
    readonly runId: string,
  ) {}

  /** Takes an event (any run's: others are ignored); true once the run has ended. */
  take(event: string, payload: AgentEventPayload): boolean {
    if (event !== "agent" || payload.runId !== this.runId) return this.end !== undefined;
    // Replay and live events can overlap on resume; seq says which were seen.
    if (typeof payload.seq === "number") {
      if (payload.seq <= this.lastSeq) return this.end !== undefined;
      this.lastSeq = payload.seq;
    }
    const data = payload.data ?? {};
    if (payload.stream === "assistant" && typeof data.text === "string") this.write(data.text);
    else if (payload.stream === "tool") this.tool(data);
    else if (payload.stream === "lifecycle" && (data.phase === "end" || data.phase === "error")) this.finish(data);
    return this.end !== undefined;
  }

  private tool(data: Record<string, unknown>): void {
    const id = String(data.toolCallId ?? "");
    if (data.phase === "start") {
      const call: ToolCallView = { toolCallId: id, name: String(data.name ?? "tool"), input: data.input ?? {} };
      this.tools.push(call);
      this.line(`${this.out.paint("cyan", `⚙ ${call.name}`)} ${this.out.paint("dim", compact(call.input))}`);
      return;
    }
    const call = this.tools.find((t) => t.toolCallId === id);
    const name = call?.name ?? "tool";
    if (data.phase === "result") {
      if (call) call.result = data.result;
      this.line(`${this.out.paint("cyan", `  ↳ ${name}`)} ${this.out.paint("dim", compact(data.result))}`);
    } else if (data.phase === "error") {
      if (call) call.error = String(data.error ?? "");
      this.line(`${this.out.paint("red", `  ↳ ${name} failed:`)} ${String(data.error ?? "")}`);
    }
  }

  private finish(data: Record<string, unknown>): void {
    this.end =
      data.phase === "end"
        ? { phase: "end" }
        : {
            phase: "error",
            ...(typeof data.code === "string" ? { code: data.code } : {}),
            ...(typeof data.error === "string" ? { error: data.error } : {}),
            ...(data.aborted === true ? { aborted: true } : {}),
          };
    if (!this.atLineStart) this.out.stream("\n");
    this.atLineStart = true;
  }

  private write(text: string): void {
    this.text += text;
    this.out.stream(text);
    if (text !== "") this.atLineStart = text.endsWith("\n");
  }

  /** A line of its own, between pieces of the answer. */
  private line(text: string): void {
    this.out.stream(`${this.atLineStart ? "" : "\n"}${text}\n`);
    this.atLineStart = true;
  }
}
