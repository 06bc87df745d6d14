import { z } from "zod";
import { timestamp } from "./results/common.js";
import type { SessionEntry, SessionSummary } from "../gen/gateway/v1/sessions.pb.js";
import { imagesOfEntryMeta, imageView } from "./image-attachments.js";

/**
 * The JSON shapes of `sessions.list` and `sessions.preview` payloads (SPEC §2) and of the
 * session events (SPEC §6), shared by the edge's WebSocket methods, the sessions service and
 * the runner's `sessions.*` tools so all show the same thing. The schemas are how a reader
 * decodes these shapes when they travel as JSON inside a bus message.
 */

export const SessionSummaryViewSchema = z.object({
  key: z.string(),
  agentId: z.string(),
  model: z.string(),
  createdAt: timestamp,
  updatedAt: timestamp,
  messageCount: z.number().int(),
  thinking: z.string().optional().describe("only when set: low, medium, high or extended"),
});
export type SessionSummaryView = z.infer<typeof SessionSummaryViewSchema>;

export const SessionMessageViewSchema = z.object({
  type: z.literal("message"),
  id: z.string(),
  parentId: z.string().describe("empty for the first message"),
  role: z.string().describe("user, assistant, ..."),
  sender: z.string(),
  body: z.string(),
  timestamp,
  kind: z.string(),
  /** The images that came with a user message: type, MIME type and an https URL or the size in bytes (never the bytes). */
  attachments: z
    .array(z.object({ type: z.literal("image"), mimeType: z.string(), url: z.string().optional(), size: z.number().optional() }))
    .optional(),
});
export type SessionMessageView = z.infer<typeof SessionMessageViewSchema>;

/** A `sessions.preview` payload: the session's summary and its newest messages first. */
export const SessionPreviewViewSchema = SessionSummaryViewSchema.extend({
  messages: z.array(SessionMessageViewSchema).describe("most recent first"),
});
export type SessionPreviewView = z.infer<typeof SessionPreviewViewSchema>;

/** What `sessions.patch` changed, as its answer and `session.updated` carry it. */
export const SessionChangesSchema = z.record(z.string(), z.string()).describe("the changed fields and their new values");
export type SessionChanges = z.infer<typeof SessionChangesSchema>;

export function sessionSummaryView(s: SessionSummary): SessionSummaryView {
  const out: SessionSummaryView = {
    key: s.key,
    agentId: s.agentId,
    model: s.model,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    messageCount: s.messageCount,
  };
  if (s.thinking !== "") out.thinking = s.thinking;
  return out;
}

/**
 * The stored display name, else the agent id for assistant turns, else the role. Runners before
 * the agent's name was stored wrote the literal "assistant": those turns show the agent id too.
 */
function senderOf(e: SessionEntry, agentId: string): string {
  if (e.role === "assistant" && (e.sender === "" || e.sender === "assistant")) return agentId;
  return e.sender || e.role;
}

export function sessionMessageView(e: SessionEntry, agentId: string): SessionMessageView {
  const images = imagesOfEntryMeta(e.metaJson);
  return {
    ...(images.length ? { attachments: images.map(imageView) } : {}),
    type: "message",
    id: e.id,
    parentId: e.parentId,
    role: e.role,
    sender: senderOf(e, agentId),
    body: e.body,
    timestamp: e.timestamp,
    kind: e.kind,
  };
}

export function sessionPreviewView(session: SessionSummary, entries: readonly SessionEntry[]): SessionPreviewView {
  return {
    ...sessionSummaryView(session),
    messages: entries.map((e) => sessionMessageView(e, session.agentId)),
  };
}
