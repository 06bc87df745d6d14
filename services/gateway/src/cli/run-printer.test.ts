import { describe, expect, it } from "vitest";
import { Output } from "./output.js";
import { RunPrinter } from "./run-printer.js";

function capture(json = false) {
  let stdout = "";
  let stderr = "";
  const out = new Output({ json, colour: false, stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
  return { out, stdout: () => stdout, stderr: () => stderr };
}

const event = (seq: number, stream: string, data: Record<string, unknown>, runId = "r1") => ["agent", { runId, seq, stream, data }] as const;

describe("RunPrinter", () => {
  it("streams the answer and puts each tool call on lines of its own", () => {
    const io = capture();
    const printer = new RunPrinter(io.out, "r1");
    const events = [
      event(1, "lifecycle", { phase: "start" }),
      event(2, "assistant", { type: "text", text: "Let me check" }),
      event(3, "tool", { phase: "start", name: "time.now", toolCallId: "c1", input: { zone: "UTC" } }),
      event(4, "tool", { phase: "result", toolCallId: "c1", result: { content: "12:00" } }),
      event(5, "tool", { phase: "start", name: "http.fetch", toolCallId: "c2", input: {} }),
      event(6, "tool", { phase: "error", toolCallId: "c2", error: "blocked" }),
      event(7, "assistant", { type: "text", text: "It is noon." }),
    ];
    for (const [name, payload] of events) expect(printer.take(name, payload)).toBe(false);
    expect(printer.take(...event(8, "lifecycle", { phase: "end" }))).toBe(true);
    expect(io.stdout()).toBe(
      'Let me check\n⚙ time.now {"zone":"UTC"}\n  ↳ time.now {"content":"12:00"}\n⚙ http.fetch {}\n  ↳ http.fetch failed: blocked\nIt is noon.\n',
    );
    expect(printer.text).toBe("Let me checkIt is noon.");
    expect(printer.tools).toEqual([
      { toolCallId: "c1", name: "time.now", input: { zone: "UTC" }, result: { content: "12:00" } },
      { toolCallId: "c2", name: "http.fetch", input: {}, error: "blocked" },
    ]);
    expect(printer.end).toEqual({ phase: "end" });
  });

  it("ignores other runs' events and events already seen (a resumed subscription overlaps)", () => {
    const io = capture();
    const printer = new RunPrinter(io.out, "r1");
    printer.take(...event(1, "assistant", { text: "a" }));
    printer.take(...event(1, "assistant", { text: "a" }));
    printer.take(...event(2, "assistant", { text: "b" }, "other"));
    printer.take("session.updated", { runId: "r1" });
    expect(printer.text).toBe("a");
    expect(printer.lastSeq).toBe(1);
  });

  it("keeps how a run failed, and writes nothing to stdout under --json", () => {
    const io = capture(true);
    const printer = new RunPrinter(io.out, "r1");
    printer.take(...event(1, "assistant", { text: "partial" }));
    expect(printer.take(...event(2, "lifecycle", { phase: "error", code: "ABORTED", error: "the run was aborted", aborted: true }))).toBe(true);
    expect(printer.end).toEqual({ phase: "error", code: "ABORTED", error: "the run was aborted", aborted: true });
    expect(io.stdout()).toBe("");
  });
});

describe("Output", () => {
  it("writes one JSON document under --json, and errors to stderr (and as that document)", () => {
    const io = capture(true);
    io.out.result({ a: 1 }, () => "human");
    expect(JSON.parse(io.stdout())).toEqual({ a: 1 });
    const failing = capture(true);
    failing.out.error(new Error("boom"), 1);
    expect(JSON.parse(failing.stdout())).toEqual({ ok: false, exitCode: 1, error: { code: "ERROR", message: "boom" } });
    expect(failing.stderr()).toBe("error: ERROR: boom\n");
  });
});
