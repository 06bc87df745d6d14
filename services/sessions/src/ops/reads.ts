import {
  GatewayError,
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
import type { SessionsDeps } from "../deps.js";
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
  const entries =
    req.limit > 0 ? (await deps.repo.tail(meta, req.limit)).reverse() : (await deps.repo.branch(meta)).entries;
  return { session: toSummary(meta), entries: entries.map(toEntry), created };
}

export async function listSessions(deps: SessionsDeps, req: SessionsListRequest): Promise<SessionsListResponse> {
  const limit = checkLimit("limit", req.limit, 50, SESSIONS_LIST_MAX_LIMIT);
  if (req.offset > SESSIONS_LIST_MAX_OFFSET)
    throw new GatewayError("INVALID_REQUEST", `offset must be at most ${SESSIONS_LIST_MAX_OFFSET}`);
  const page = await deps.repo.listPage({ agentId: req.agentId, offset: req.offset, limit });
  return { sessions: page.sessions.map(toSummary), total: page.total };
}

/** Previews are the hot read: their payload is encoded once per content (EncodedPreviews). */
export async function previewSession(deps: SessionsDeps, req: SessionsPreviewRequest): Promise<SessionsPreviewResponse> {
  const limit = checkLimit("limit", req.limit, 20, SESSIONS_PREVIEW_MAX_LIMIT);
  const found = await deps.repo.preview(checkKey(req.key), limit);
  if (!found) throw notFound(req.key);
  return { viewJson: deps.previews.encode(limit, found.meta, found.entries) };
}
