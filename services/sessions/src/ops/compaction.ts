import { GatewayError, type SessionsCompactResponse } from "@gw/contracts";
import type { SessionsDeps } from "./deps.js";
import type { StoredEntry } from "../model.js";
import { requireSession } from "./lookup.js";

/**
 * `sessions.compact`: the newest KEEP_TAIL entries stay (more when that would split a tool
 * exchange), everything older becomes one summary entry, as long as that makes the transcript
 * smaller; and the pieces it is made of (the transcript size it reports, the extractive summary).
 */

/** Entries compaction leaves in place; everything older becomes one summary entry. */
export const KEEP_TAIL = 8;
const MAX_LINES = 24;
const MAX_LINE_CHARS = 200;

/**
 * The transcript's size in bytes (compaction's beforeSize/afterSize): the UTF-8 length of
 * "<role>: <body>\n" summed over the current branch, i.e. the text a model would be sent.
 */
export function transcriptSize(entries: readonly StoredEntry[]): number {
  let size = 0;
  for (const e of entries) size += Buffer.byteLength(`${e.role}: ${e.body}\n`, "utf8");
  return size;
}

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const end = flat.search(/[.!?](\s|$)/);
  const sentence = end === -1 ? flat : flat.slice(0, end + 1);
  return sentence.length <= MAX_LINE_CHARS ? sentence : `${sentence.slice(0, MAX_LINE_CHARS - 1)}…`;
}

/** Evenly spread indices, always the first and the last: the same input always picks the same lines. */
function pick(count: number, max: number): number[] {
  if (count <= max) return Array.from({ length: count }, (_, i) => i);
  return Array.from({ length: max }, (_, i) => Math.round((i * (count - 1)) / (max - 1)));
}

/**
 * The summary used with builtin models (and whenever the runner cannot summarise): the first
 * sentence of up to 24 evenly spread user/assistant/summary entries. Deterministic, no model.
 */
export function extractiveSummary(older: readonly StoredEntry[]): string {
  const spoken = older.filter((e) => e.role !== "tool" && e.body.trim() !== "");
  const lines = pick(spoken.length, MAX_LINES).map((i) => {
    const e = spoken[i]!;
    const named = e.sender !== "" && e.sender !== e.role;
    const who = e.kind === "summary" ? "earlier summary" : named ? `${e.role} (${e.sender})` : e.role;
    return `- ${who}: ${firstSentence(e.body)}`;
  });
  return [`Summary of ${older.length} earlier messages:`, ...lines].join("\n");
}

/** Whether compacting would change anything: there is more than one summary's worth of older history. */
export function worthCompacting(entries: readonly StoredEntry[]): boolean {
  const older = entries.slice(0, tailStart(entries));
  return older.length > 1 || (older.length === 1 && older[0]!.kind !== "summary");
}

/**
 * Where the kept tail starts: KEEP_TAIL entries from the end, moved back to the start of a tool
 * exchange it would split. A tool result whose call went into the summary is one that OpenAI and
 * Anthropic refuse, so every later run of the session would fail.
 */
export function tailStart(entries: readonly StoredEntry[]): number {
  let start = Math.max(0, entries.length - KEEP_TAIL);
  while (start > 0 && entries[start]!.role === "tool") start--;
  return start;
}

const COMPACT_ATTEMPTS = 5;

function unchanged(entries: readonly StoredEntry[], size: number): SessionsCompactResponse {
  const n = entries.length;
  return { compacted: false, beforeSize: size, afterSize: size, beforeCount: n, afterCount: n };
}

/**
 * `deadline` is the caller's (ms since the epoch): past it the caller has been told TIMEOUT, so
 * compaction stops without writing rather than change the session after reporting that it failed.
 */
export async function compactSession(deps: SessionsDeps, key: string, deadline: number): Promise<SessionsCompactResponse> {
  const late = () => new GatewayError("TIMEOUT", `compacting ${key} took past the caller's deadline; the session is unchanged`);
  for (let attempt = 0; attempt < COMPACT_ATTEMPTS; attempt++) {
    if (Date.now() >= deadline) throw late();
    const meta = await requireSession(deps, key);
    const { entries, tip } = await deps.repo.branch(meta);
    const beforeSize = transcriptSize(entries);
    if (!worthCompacting(entries)) return unchanged(entries, beforeSize);
    const start = tailStart(entries);
    const older = entries.slice(0, start);
    const kept = entries.slice(start);
    const body = await deps.summarize(meta, older, deadline);
    const at = deps.now();
    const summary = {
      id: deps.newId(),
      parentId: "",
      role: "system",
      sender: "compaction",
      body,
      timestamp: at,
      runId: "",
      kind: "summary",
      meta: "",
    };
    const rebuilt = [summary, { ...kept[0]!, parentId: summary.id }, ...kept.slice(1)];
    const afterSize = transcriptSize(rebuilt);
    // A summary longer than what it replaces (short turns) would grow the history it was asked to shrink.
    if (afterSize >= beforeSize) return unchanged(entries, beforeSize);
    if (Date.now() >= deadline) throw late();
    const batch = { gen: meta.gen, base: true, count: rebuilt.length, at, entries: rebuilt };
    // Lost a race with an append: read the new history and summarise again.
    if (!(await deps.repo.replace(meta, batch, tip))) continue;
    return { compacted: true, beforeSize, afterSize, beforeCount: entries.length, afterCount: rebuilt.length };
  }
  throw new GatewayError("CONFLICT", `session ${key} kept changing while it was being compacted; try again`);
}
