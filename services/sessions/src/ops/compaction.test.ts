import { describe, expect, it } from "vitest";
import { extractiveSummary, KEEP_TAIL, transcriptSize, worthCompacting } from "./compaction.js";
import type { StoredEntry } from "../model.js";

const entry = (role: string, body: string, kind = "message"): StoredEntry => ({
  id: body,
  parentId: "",
  role,
  sender: role,
  body,
  timestamp: 0,
  runId: "",
  kind,
  meta: "",
});

describe("compaction", () => {
  it("measures the transcript as UTF-8 bytes of '<role>: <body>\\n'", () => {
    expect(transcriptSize([entry("user", "hé"), entry("assistant", "ok")])).toBe("user: hé\n".length + 1 + 14);
  });

  it("writes the same extractive summary for the same history, first sentences, no tool output", () => {
    const older = [
      entry("user", "Book a table for two. Tomorrow at eight."),
      entry("tool", "{\"ok\":true}"),
      entry("assistant", "Done! Anything else?"),
    ];
    const summary = extractiveSummary(older);
    expect(summary).toBe("Summary of 3 earlier messages:\n- user: Book a table for two.\n- assistant: Done!");
    expect(extractiveSummary(older)).toBe(summary);
  });

  it("keeps at most 24 evenly spread lines, the first and the last among them", () => {
    const older = Array.from({ length: 100 }, (_, i) => entry("user", `line ${i}.`));
    const lines = extractiveSummary(older).split("\n").slice(1);
    expect(lines).toHaveLength(24);
    expect(lines[0]).toBe("- user: line 0.");
    expect(lines.at(-1)).toBe("- user: line 99.");
  });

  it("compacts only when there is more than one summary's worth of older history", () => {
    const tail = Array.from({ length: KEEP_TAIL }, (_, i) => entry("user", `t${i}`));
    expect(worthCompacting(tail)).toBe(false);
    expect(worthCompacting([entry("system", "s", "summary"), ...tail])).toBe(false);
    expect(worthCompacting([entry("user", "old"), ...tail])).toBe(true);
  });
});
