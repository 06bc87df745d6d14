import {
  GatewayError,
  given,
  isGatewayError,
  SESSIONS_LIST_MAX_LIMIT,
  SESSIONS_LIST_MAX_OFFSET,
  SESSIONS_PREVIEW_MAX_LIMIT,
  type SessionsHistoryRequest,
  type SessionsHistoryResponse,
  type SessionsListRequest,
  type SessionsListResponse,
  type SessionsPreviewRequest,
  type SessionsPreviewResponse,
} from "@gw/contracts";
import { toEntry, toSummary } from "../convert.js";
import type { SessionsDeps } from "./deps.js";
import type { StoredEntry } from "../model.js";
import { checkKey, checkLimit } from "../validate.js";
import { ensureSession, notFound } from "./lookup.js";

/** The operations that read sessions: the runner's history, and list and preview for clients. */

export async function readHistory(
  deps: SessionsDeps,
  req: SessionsHistoryRequest,
): Promise<SessionsHistoryResponse> {
  checkKey(req.key);
  let meta = await deps.repo.getMeta(req.key);
  let created = false;
  if (!meta) {
    if (!req.create) throw notFound(req.key);
    ({ meta, created } = await ensureSession(deps, req.key, req.agentId));
  }
  for (let attempt = 0; ; attempt++) {
    try {
      const entries =
        req.limit > 0 ? withinReplyBudget(await deps.repo.tail(meta, req.limit)).reverse() : (await deps.repo.branch(meta)).entries;
      return { session: toSummary(meta), entries: entries.map(toEntry), created };
    } catch (err) {
      // Deleted between our lookup and the read: a run's read (create) starts the key's next
      // session, as an append does, instead of failing NOT_FOUND for a session it would make.
      if (!req.create || !isGatewayError(err) || err.code !== "NOT_FOUND" || attempt > 0) throw err;
      ({ meta, created } = await ensureSession(deps, req.key, req.agentId));
    }
  }
}

/**
 * The most a history reply carries, well under NATS's max_payload (1 MiB by default): a session
 * whose newest `limit` entries hold more (long pastes, tool results at their cap) would otherwise
 * fail every run on it, since its reply could never be sent. Such a history is read as its newest
 * entries that fit; the runner drops a tool result whose call was left out (docs/decisions.md).
 */
export const HISTORY_REPLY_MAX_BYTES = 768 * 1024;

/** About what an entry weighs in the encoded reply: its texts plus the fields' framing. */
function entryBytes(e: StoredEntry): number {
  const ENTRY_OVERHEAD = 128;
  return Buffer.byteLength(e.body) + Buffer.byteLength(e.sender) + (e.meta.length * 3) / 4 + e.id.length + e.parentId.length + e.runId.length + ENTRY_OVERHEAD;
}

/** The newest entries (newest first, as `tail` gives them) that fit the reply; the newest always. */
export function withinReplyBudget(newestFirst: StoredEntry[], maxBytes = HISTORY_REPLY_MAX_BYTES): StoredEntry[] {
  let total = 0;
  for (let i = 0; i < newestFirst.length; i++) {
    total += entryBytes(newestFirst[i]!);
    if (total > maxBytes && i > 0) return newestFirst.slice(0, i);
  }
  return newestFirst;
}

export async function listSessions(deps: SessionsDeps, req: SessionsListRequest): Promise<SessionsListResponse> {
  const limit = checkLimit("limit", req.limit, 50, SESSIONS_LIST_MAX_LIMIT);
  if (req.offset > SESSIONS_LIST_MAX_OFFSET)
    throw new GatewayError("INVALID_REQUEST", `offset must be at most ${SESSIONS_LIST_MAX_OFFSET}`);
  // The list index names "every agent" "".
  const page = await deps.repo.listPage({ agentId: given(req.agentId) ?? "", offset: req.offset, limit });
  return { sessions: page.sessions.map(toSummary), total: page.total };
}

/** Previews are the hot read: their payload is encoded once per content (EncodedPreviews). */
export function previewSession(deps: SessionsDeps, req: SessionsPreviewRequest): Promise<SessionsPreviewResponse> {
  // Its checks throw synchronously: serveRpc turns that into the same error reply.
  const limit = checkLimit("limit", req.limit, 20, SESSIONS_PREVIEW_MAX_LIMIT);
  return deps.repo.preview(checkKey(req.key), limit).then((found) => {
    if (!found) throw notFound(req.key);
    // The reply, like the history's, must fit one bus message: a preview of long messages shows
    // the newest that fit (at least one).
    return { viewJson: deps.previews.encode(limit, found.meta, withinReplyBudget(found.entries)) };
  });
}
