import type { SessionEntry } from "@gw/contracts";
import type { ModelRequest } from "../providers/model-provider.js";

/** What compaction asks for when the request leaves max_chars at 0. */
export const DEFAULT_SUMMARY_CHARS = 4_000;
/** One long entry (a fetched page, a pasted log) must not crowd out the rest. */
const MAX_ENTRY_CHARS = 4_000;
/** Beyond this the oldest entries are left out, so the request stays within model context. */
const MAX_TRANSCRIPT_CHARS = 120_000;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function speaker(e: SessionEntry): string {
  if (e.kind === "summary") return "earlier summary";
  if (e.role === "tool") return `tool result${e.sender ? ` (${e.sender})` : ""}`;
  return e.sender !== "" && e.sender !== e.role ? `${e.role} (${e.sender})` : e.role;
}

/** The entries as `<speaker>: <body>` lines, oldest first; the newest are kept when it is too long. */
export function formatTranscript(entries: readonly SessionEntry[]): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.body.trim() === "") continue;
    const line = `${speaker(e)}: ${clip(e.body.trim(), MAX_ENTRY_CHARS)}`;
    if (size + line.length > MAX_TRANSCRIPT_CHARS) {
      lines.push(`[${i + 1} older messages left out]`);
      break;
    }
    lines.push(line);
    size += line.length + 1;
  }
  return lines.reverse().join("\n");
}

function systemPrompt(maxChars: number): string {
  return [
    "You write the memory of an AI assistant's conversation. Older messages are about to be replaced by your summary;",
    "the assistant will continue with only the summary and the most recent messages.",
    "Keep what it needs to carry on: who is involved, what the user wants, facts and decisions established,",
    "results of tool calls that still matter, promises made and questions still open.",
    "Write in the conversation's language, in the third person, as plain prose or short bullet points.",
    `Answer with the summary only, no preamble, at most ${maxChars} characters.`,
  ].join(" ");
}

/** One model turn, no tools, asking for a summary of `entries` in at most `maxChars` characters. */
export function summaryRequest(model: string, entries: readonly SessionEntry[], maxChars: number): ModelRequest {
  const transcript = formatTranscript(entries);
  return {
    model,
    system: systemPrompt(maxChars),
    messages: [
      {
        role: "user",
        content: `Summarize this conversation (${entries.length} messages, oldest first) in at most ${maxChars} characters.\n\n<transcript>\n${transcript}\n</transcript>`,
      },
    ],
    tools: [],
  };
}

/** Cuts to at most `maxChars` characters, at a word boundary when there is one in the second half, marked with "…". */
export function truncateAtWord(text: string, maxChars: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= maxChars) return trimmed;
  let head = trimmed.slice(0, Math.max(0, maxChars - 1));
  // Never leave half of a surrogate pair behind.
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  const atBoundary = /\s/.test(trimmed.charAt(head.length));
  const space = head.search(/\s\S*$/);
  const cut = !atBoundary && space >= maxChars / 2 ? head.slice(0, space) : head;
  return `${cut.trimEnd()}…`;
}
