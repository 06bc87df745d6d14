import type { SessionEntry, SessionSummary } from "../gen/gateway/v1/sessions.pb.js";

/**
 * The JSON shapes of `sessions.list` and `sessions.preview` payloads (SPEC §2), shared by the
 * edge's WebSocket methods and the runner's `sessions.*` tools so both show the same thing.
 */

export interface SessionSummaryView {
  key: string;
  agentId: string;
  model: string;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  /** Only when set. */
  thinking?: string;
}

export interface SessionMessageView {
  type: "message";
  id: string;
  parentId: string;
  role: string;
  sender: string;
  body: string;
  timestamp: number;
  kind: string;
}

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

/** `sender` is the stored display name, else the agent id for assistant turns, else the role. */
export function sessionMessageView(e: SessionEntry, agentId: string): SessionMessageView {
  return {
    type: "message",
    id: e.id,
    parentId: e.parentId,
    role: e.role,
    sender: e.sender || (e.role === "assistant" ? agentId : e.role),
    body: e.body,
    timestamp: e.timestamp,
    kind: e.kind,
  };
}

/** A `sessions.preview` payload: the session's summary and its newest messages first. */
export function sessionPreviewView(
  session: SessionSummary | undefined,
  entries: readonly SessionEntry[],
): Partial<SessionSummaryView> & { messages: SessionMessageView[] } {
  const agentId = session?.agentId ?? "";
  return {
    ...(session ? sessionSummaryView(session) : {}),
    messages: entries.map((e) => sessionMessageView(e, agentId)),
  };
}
