import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callRpc, createSubjects, InProcessBus } from "@gw/bus";
import { defaultConfig } from "@gw/config";
import { type NewSessionEntry, RPC } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Summarizer } from "./deps.js";
import { FileSessionRepository } from "../files/file-repository.js";
import type { StoredEntry } from "../model.js";
import { startSessionsService } from "../service.js";
import { extractiveSummary, KEEP_TAIL, tailStart, transcriptSize, worthCompacting } from "./compaction.js";

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

  it("starts the kept tail at the assistant turn whose tool results it keeps", () => {
    const turn = (n: number) => [entry("user", `u${n}`), entry("assistant", `a${n}`)];
    const exchange = [entry("user", "q"), entry("assistant", "calls"), entry("tool", "t1"), entry("tool", "t2"), entry("tool", "t3"), entry("assistant", "a")];
    // 14 entries: the newest 8 would begin at t1, whose call is older.
    const entries = [...turn(0), ...turn(1), ...exchange, ...turn(2), ...turn(3)];
    expect(entries[entries.length - KEEP_TAIL]!.body).toBe("t1");
    expect(entries[tailStart(entries)]!.body).toBe("calls");
    expect(tailStart([...turn(0), ...turn(1), ...turn(2), ...turn(3), ...turn(4)])).toBe(2);
    // Nothing older than the exchange but its question: still one entry to summarise.
    expect(worthCompacting(entries.slice(4))).toBe(true);
    expect(worthCompacting([entry("assistant", "calls"), ...Array.from({ length: 9 }, (_, i) => entry("tool", `t${i}`))])).toBe(false);
  });
});

describe("sessions.compact", () => {
  const subjects = createSubjects();
  const config = defaultConfig({ agents: { default: "main", list: [{ id: "main", name: "Main", model: "builtin/echo" }] } });
  const logger = createLogger({ service: "test", level: "silent" });
  const toolMeta = (meta: object) => Buffer.from(JSON.stringify(meta), "utf8");
  const say = (role: string, body: string, meta?: object): NewSessionEntry => ({
    role,
    sender: role,
    body,
    runId: "",
    metaJson: meta ? toolMeta(meta) : Buffer.alloc(0),
  });
  let dir: string;
  let bus: InProcessBus;
  let repo: FileSessionRepository;
  let summarize: Summarizer;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-compact-"));
    bus = new InProcessBus();
    repo = await FileSessionRepository.open(dir);
    summarize = async () => "Summary.";
    startSessionsService({ config, bus, subjects, repo, logger, summarize: (...args) => summarize(...args) });
  });
  afterEach(async () => {
    await bus.close();
    await repo.close();
    await rm(dir, { recursive: true, force: true });
  });

  const append = (key: string, entries: NewSessionEntry[]) =>
    callRpc(bus, subjects, RPC.sessionsAppend, { key, agentId: "", entries }, { timeoutMs: 5_000 });
  const history = async (key: string) =>
    (await callRpc(bus, subjects, RPC.sessionsHistory, { key, agentId: "", limit: 0, create: false }, { timeoutMs: 5_000 })).entries;
  const compact = (key: string, timeoutMs = 5_000) => callRpc(bus, subjects, RPC.sessionsCompact, { key }, { timeoutMs });
  const turns = (n: number, body: (i: number) => string) =>
    Array.from({ length: n }, (_, i) => [say("user", body(i)), say("assistant", body(i))]).flat();

  it("answers compacted: false and changes nothing when the summary would not make the transcript smaller", async () => {
    await append("web:short", turns(5, (i) => "abcde"[i]!));
    const before = await history("web:short");
    summarize = async (_meta, older) => extractiveSummary(older);
    const res = await compact("web:short");
    expect(res).toMatchObject({ compacted: false, beforeSize: 105, afterSize: 105, beforeCount: 10, afterCount: 10 });
    expect(await history("web:short")).toEqual(before);
  });

  it("compacts when the summary is smaller, and reports the sizes it wrote", async () => {
    await append("web:long", turns(5, (i) => `Turn ${i} says quite a lot more than one letter does.`));
    const res = await compact("web:long");
    expect(res.compacted).toBe(true);
    expect(res.afterSize).toBeLessThan(res.beforeSize);
    expect(transcriptSize((await history("web:long")).map((e) => ({ ...e, meta: "" })))).toBe(res.afterSize);
  });

  it("never keeps a tool result without the assistant turn that called it", async () => {
    const calls = [1, 2, 3].map((n) => ({ id: `call_${n}`, name: "time.now", input: {} }));
    await append("web:tools", [
      ...turns(2, (i) => `Opening question number ${i} with enough words to be worth a summary.`),
      say("user", "What time is it, three times over?"),
      say("assistant", "", { toolCalls: calls }),
      ...calls.map((c) => say("tool", '{"now":"12:00"}', { toolCallId: c.id, name: c.name })),
      say("assistant", "Noon, three times."),
      ...turns(2, (i) => `Later ${i}`),
    ]);
    expect(await compact("web:tools")).toMatchObject({ compacted: true, beforeCount: 14, afterCount: 10 });
    const kept = await history("web:tools");
    expect(kept.map((e) => e.role)).toEqual(["system", "assistant", "tool", "tool", "tool", "assistant", "user", "assistant", "user", "assistant"]);
    expect(JSON.parse(Buffer.from(kept[1]!.metaJson).toString()).toolCalls).toHaveLength(3);
  });

  it("stops without writing once the caller's deadline has passed (a slow model summary)", async () => {
    await append("web:slow", turns(6, (i) => `Turn ${i} says quite a lot more than one letter does.`));
    const before = await history("web:slow");
    let done!: () => void;
    const summarized = new Promise<void>((resolve) => (done = resolve));
    summarize = async () => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      done();
      return "Summary.";
    };
    await expect(compact("web:slow", 150)).rejects.toMatchObject({ code: "TIMEOUT" });
    await summarized;
    // The compaction goes on to its write, or not, on the turns right after the summary.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await history("web:slow")).toEqual(before);
  });
});
