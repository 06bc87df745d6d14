import { type Bus, callRpc, type Subjects } from "@gw/bus";
import { decodeJson, imagesOfEntryMeta, type NewSessionEntry, RPC, type SessionEntry, StoredImageSchema } from "@gw/contracts";
import { z } from "zod";
import type { ChatMessage } from "../providers/model-provider.js";
import { userMessage } from "./conversation.js";

export interface SessionView {
  /** The agent bound to the session (SPEC §2; sessions.patch moves it); "" without a session. */
  agentId: string;
  /** The session's own model/thinking ("" when unset), e.g. from sessions.patch. */
  model: string;
  thinking: string;
  /** Summaries written by compaction, replayed as system context. */
  summary: string;
  messages: ChatMessage[];
}

/** What the runner keeps in `SessionEntry.meta_json` so a tool turn replays exactly. */
const EntryMetaSchema = z.object({
  toolCalls: z
    .array(z.object({ id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) }))
    .optional(),
  toolCallId: z.string().optional(),
  name: z.string().optional(),
  isError: z.boolean().optional(),
  /** A user turn's images (read by sessions.preview too, through imagesOfEntryMeta). */
  images: z.array(StoredImageSchema).optional(),
});
type EntryMeta = z.infer<typeof EntryMetaSchema>;

/** An entry's meta; one that does not read as EntryMeta replays as a plain turn. */
function readMeta(entry: SessionEntry): EntryMeta {
  if (entry.metaJson.length === 0) return {};
  try {
    return decodeJson(entry.metaJson, EntryMetaSchema, "session entry meta");
  } catch {
    return {};
  }
}

/**
 * A history branch as provider-neutral messages; tool turns replay through their meta. The
 * newest `historyLimit` entries may begin inside a tool exchange: a result whose call was cut
 * off is left out, since providers refuse a tool result without its call.
 */
export function entriesToMessages(entries: SessionEntry[]): { summary: string; messages: ChatMessage[] } {
  const messages: ChatMessage[] = [];
  const summaries: string[] = [];
  // The calls of the latest assistant turn: the only ones a tool result here can answer.
  let called = new Set<string>();
  for (const entry of entries) {
    const meta = readMeta(entry);
    if (entry.kind === "summary" || entry.role === "system") summaries.push(entry.body);
    else if (entry.role === "user") {
      called = new Set();
      messages.push(userMessage(entry.body, imagesOfEntryMeta(entry.metaJson)));
    } else if (entry.role === "assistant") {
      called = new Set((meta.toolCalls ?? []).map((call) => call.id));
      messages.push({ role: "assistant", content: entry.body, ...(meta.toolCalls?.length ? { toolCalls: meta.toolCalls } : {}) });
    } else if (entry.role === "tool" && meta.toolCallId && called.has(meta.toolCallId))
      messages.push({ role: "tool", toolCallId: meta.toolCallId, name: meta.name ?? "", content: entry.body, isError: meta.isError });
  }
  return { summary: summaries.join("\n\n"), messages };
}

/**
 * Who a turn's `sender` names (SPEC §2: the display name): the person for user turns, the agent's
 * configured name for assistant turns ("" lets the preview show the agent id instead).
 */
export interface EntrySenders {
  user: string;
  assistant: string;
}

export function messageToEntry(message: ChatMessage, runId: string, senders: EntrySenders): NewSessionEntry {
  const json = (meta: EntryMeta) => Buffer.from(JSON.stringify(meta), "utf8");
  if (message.role === "user") {
    const metaJson = message.images?.length ? json({ images: message.images }) : Buffer.alloc(0);
    return { role: "user", sender: senders.user, body: message.content, runId, metaJson };
  }
  if (message.role === "assistant")
    return {
      role: "assistant",
      sender: senders.assistant,
      body: message.content,
      runId,
      metaJson: message.toolCalls?.length ? json({ toolCalls: message.toolCalls }) : Buffer.alloc(0),
    };
  return {
    role: "tool",
    sender: message.name,
    body: message.content,
    runId,
    metaJson: json({ toolCallId: message.toolCallId, name: message.name, isError: message.isError }),
  };
}

/**
 * The runner's view of the sessions service (RPC.sessionsHistory / RPC.sessionsAppend).
 * Without a sessions service a run fails with UNAVAILABLE instead of answering from an empty
 * history and dropping the exchange: an answer the session does not hold would be lost data
 * (docs/decisions.md "Agent runs").
 */
/**
 * Settles as `work` does, or rejects with the signal's reason once it aborts (a read, abandoned).
 * An abandoned `work` may still fail later (the session was deleted meanwhile): it is observed
 * here first, so that failure is never an unhandled rejection (issue 29: one ended the process).
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => undefined);
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

export class SessionClient {
  constructor(private readonly deps: { bus: Bus; subjects: Subjects; timeoutMs: number; historyLimit: number }) {}

  /**
   * The session's history. `signal` (the run's) cuts the wait short: a read whose reply was lost
   * in a NATS restart would otherwise hold the run for the whole request timeout, past its own.
   * A session this creates is bound to `agentId` ("": the default agent).
   */
  async load(key: string, agentId: string, signal?: AbortSignal): Promise<SessionView> {
    const read = callRpc(
      this.deps.bus,
      this.deps.subjects,
      RPC.sessionsHistory,
      { key, agentId, limit: this.deps.historyLimit, create: true },
      { timeoutMs: this.deps.timeoutMs },
    );
    const res = await (signal === undefined ? read : untilAborted(read, signal));
    const { session } = res;
    return { agentId: session?.agentId ?? "", model: session?.model ?? "", thinking: session?.thinking ?? "", ...entriesToMessages(res.entries) };
  }

  async append(key: string, agentId: string, entries: NewSessionEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await callRpc(this.deps.bus, this.deps.subjects, RPC.sessionsAppend, { key, agentId, entries }, { timeoutMs: this.deps.timeoutMs });
  }
}
