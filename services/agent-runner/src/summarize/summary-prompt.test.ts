import type { SessionEntry } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { formatTranscript, summaryRequest, truncateAtWord } from "./summary-prompt.js";

const entry = (role: string, body: string, extra: Partial<SessionEntry> = {}): SessionEntry => ({
  id: "",
  parentId: "",
  role,
  sender: "",
  body,
  timestamp: 0,
  runId: "",
  kind: "message",
  metaJson: Buffer.alloc(0),
  ...extra,
});

describe("formatTranscript", () => {
  it("writes one line per entry, oldest first, naming senders, tools and earlier summaries", () => {
    const text = formatTranscript([
      entry("system", "They met before.", { kind: "summary", sender: "compaction" }),
      entry("user", "  Book a table\nfor two.  ", { sender: "Ada" }),
      entry("assistant", "Which day?", { sender: "assistant" }),
      entry("tool", "2025-01-01 10:00 (UTC)", { sender: "time.now" }),
      entry("assistant", "   "),
    ]);
    expect(text).toBe(
      [
        "earlier summary: They met before.",
        "user (Ada): Book a table\nfor two.",
        "assistant: Which day?",
        "tool result (time.now): 2025-01-01 10:00 (UTC)",
      ].join("\n"),
    );
  });

  it("clips one huge entry and leaves out the oldest entries past the transcript budget", () => {
    const clipped = formatTranscript([entry("tool", "x".repeat(10_000))]);
    expect(clipped.length).toBeLessThan(4_100);
    expect(clipped.endsWith("x…")).toBe(true);
    const many = Array.from({ length: 100 }, (_, i) => entry("user", `${i} ${"y".repeat(3_000)}`));
    const lines = formatTranscript(many).split("\n");
    expect(lines[0]).toMatch(/^\[\d+ older messages left out\]$/);
    expect(lines.at(-1)).toMatch(/^user: 99 /);
    expect(lines.length).toBeLessThan(many.length);
  });
});

describe("summaryRequest", () => {
  it("asks one tool-less turn for a bounded summary of the transcript", () => {
    const req = summaryRequest("gpt-test", [entry("user", "hello"), entry("assistant", "hi")], 500);
    expect(req).toMatchObject({ model: "gpt-test", tools: [] });
    expect(req.thinking).toBeUndefined();
    expect(req.system).toMatch(/summary/);
    expect(req.system).toContain("at most 500 characters");
    expect(req.messages).toEqual([
      {
        role: "user",
        content: expect.stringContaining("<transcript>\nuser: hello\nassistant: hi\n</transcript>"),
      },
    ]);
    expect(req.messages[0]!.content).toContain("2 messages");
  });
});

describe("truncateAtWord", () => {
  it("keeps text that fits, trimmed", () => {
    expect(truncateAtWord("  short text \n", 20)).toBe("short text");
    expect(truncateAtWord("exactly ten", 11)).toBe("exactly ten");
  });

  it("cuts at the last word boundary and marks the cut, never past maxChars", () => {
    expect(truncateAtWord("the quick brown fox jumps", 17)).toBe("the quick brown…");
    expect(truncateAtWord("the quick brown fox jumps", 16)).toBe("the quick brown…");
    for (let max = 1; max < 30; max++) expect(truncateAtWord("the quick brown fox jumps over it", max).length).toBeLessThanOrEqual(max);
  });

  it("cuts inside a word when the only boundary is too early", () => {
    expect(truncateAtWord("a supercalifragilistic word", 12)).toBe("a supercali…");
  });

  it("does not split a surrogate pair", () => {
    expect(truncateAtWord("ab😀cd efgh", 4)).toBe("ab…");
  });
});
