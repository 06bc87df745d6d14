import {
  encodeJson,
  GatewayError,
  SESSIONS_LIST_MAX_LIMIT,
  SESSIONS_LIST_MAX_OFFSET,
  SESSIONS_PREVIEW_MAX_LIMIT,
  type SessionsCompactResponse,
  type SessionsListRequest,
  type SessionsListResponse,
  type SessionsPatchRequest,
  type SessionsPatchResponse,
  type SessionsPreviewRequest,
  type SessionsPreviewResponse,
  THINKING_LEVELS,
} from "@gw/contracts";
import { KEEP_TAIL, transcriptSize, worthCompacting } from "./compaction.js";
import { toSummary } from "./convert.js";
import type { SessionsDeps } from "./deps.js";
import type { SessionMeta } from "./model.js";
import { newestPage } from "./newest-page.js";
import { requireSession } from "./session-ops.js";
import { checkKey, checkLimit } from "./validate.js";

export async function listSessions(deps: SessionsDeps, req: SessionsListRequest): Promise<SessionsListResponse> {
  const limit = checkLimit("limit", req.limit, 50, SESSIONS_LIST_MAX_LIMIT);
  if (req.offset > SESSIONS_LIST_MAX_OFFSET)
    throw new GatewayError("INVALID_REQUEST", `offset must be at most ${SESSIONS_LIST_MAX_OFFSET}`);
  const all = await deps.repo.listMeta();
  const matching = req.agentId === "" ? all : all.filter((m) => m.agentId === req.agentId);
  const page = newestPage(matching, req.offset, limit);
  return { sessions: page.map(toSummary), total: matching.length };
}

/** Previews are the hot read: their payload is encoded once per content (EncodedPreviews). */
export async function previewSession(deps: SessionsDeps, req: SessionsPreviewRequest): Promise<SessionsPreviewResponse> {
  const limit = checkLimit("limit", req.limit, 20, SESSIONS_PREVIEW_MAX_LIMIT);
  const found = await deps.repo.preview(checkKey(req.key), limit);
  if (!found) throw new GatewayError("NOT_FOUND", `unknown session: ${req.key}`);
  return { viewJson: deps.previews.encode(limit, found.meta, found.entries) };
}

function checkPatch(deps: SessionsDeps, req: SessionsPatchRequest): { agentId: string } {
  checkKey(req.key);
  if (req.thinking !== "" && !(THINKING_LEVELS as readonly string[]).includes(req.thinking))
    throw new GatewayError("INVALID_REQUEST", "thinking must be one of low, medium, high");
  if (req.model !== "" && !/^[a-z0-9][a-z0-9_-]*\/\S+$/.test(req.model))
    throw new GatewayError("INVALID_REQUEST", 'model must look like "<provider>/<model>"');
  return { agentId: req.agentId === "" ? "" : deps.agents.resolve(req.agentId) };
}

/** The settings `req` changes on `current`; a new agent brings its model unless one is given. */
function diff(deps: SessionsDeps, req: SessionsPatchRequest, agentId: string, current: SessionMeta) {
  const changes: Record<string, string> = {};
  if (agentId !== "" && agentId !== current.agentId) {
    changes.agentId = agentId;
    const model = req.model === "" ? deps.agents.modelOf(agentId) : req.model;
    if (model !== current.model) changes.model = model;
  }
  if (req.model !== "" && req.model !== current.model) changes.model = req.model;
  if (req.thinking !== "" && req.thinking !== current.thinking) changes.thinking = req.thinking;
  return changes;
}

export async function patchSession(deps: SessionsDeps, req: SessionsPatchRequest): Promise<SessionsPatchResponse> {
  const { agentId } = checkPatch(deps, req);
  let changes: Record<string, string> = {};
  const result = await deps.repo.updateMeta(req.key, (current) => {
    // Recomputed on every attempt: a retry after a concurrent patch must report what it changed.
    changes = diff(deps, req, agentId, current);
    if (Object.keys(changes).length === 0) return undefined;
    return { ...current, ...changes, updatedAt: Math.max(current.updatedAt, deps.now()) };
  });
  if (!result) throw new GatewayError("NOT_FOUND", `unknown session: ${req.key}`);
  const updated = Object.keys(changes).length > 0;
  if (updated) deps.events.updated(req.key, changes);
  return {
    updated,
    session: toSummary(result.after),
    changesJson: encodeJson(changes),
  };
}

export async function resetSession(deps: SessionsDeps, key: string): Promise<{ reset: boolean }> {
  const meta = await requireSession(deps, key);
  await deps.repo.replace(meta, { gen: meta.gen, base: true, count: 0, at: deps.now(), entries: [] });
  return { reset: true };
}

export async function deleteSession(deps: SessionsDeps, key: string): Promise<{ deleted: boolean }> {
  if (!(await deps.repo.delete(checkKey(key))))
    throw new GatewayError("NOT_FOUND", `unknown session: ${key}`);
  return { deleted: true };
}

const COMPACT_ATTEMPTS = 5;

export async function compactSession(deps: SessionsDeps, key: string): Promise<SessionsCompactResponse> {
  for (let attempt = 0; attempt < COMPACT_ATTEMPTS; attempt++) {
    const meta = await requireSession(deps, key);
    const { entries, tip } = await deps.repo.branch(meta);
    const beforeSize = transcriptSize(entries);
    if (!worthCompacting(entries)) {
      const n = entries.length;
      return { compacted: false, beforeSize, afterSize: beforeSize, beforeCount: n, afterCount: n };
    }
    const older = entries.slice(0, entries.length - KEEP_TAIL);
    const kept = entries.slice(entries.length - KEEP_TAIL);
    const at = deps.now();
    const summary = {
      id: deps.newId(),
      parentId: "",
      role: "system",
      sender: "compaction",
      body: await deps.summarize(meta, older),
      timestamp: at,
      runId: "",
      kind: "summary",
      meta: "",
    };
    const rebuilt = [summary, { ...kept[0]!, parentId: summary.id }, ...kept.slice(1)];
    const batch = { gen: meta.gen, base: true, count: rebuilt.length, at, entries: rebuilt };
    // Lost a race with an append: read the new history and summarise again.
    if (!(await deps.repo.replace(meta, batch, tip))) continue;
    return {
      compacted: true,
      beforeSize,
      afterSize: transcriptSize(rebuilt),
      beforeCount: entries.length,
      afterCount: rebuilt.length,
    };
  }
  throw new GatewayError("CONFLICT", `session ${key} kept changing while it was being compacted; try again`);
}
