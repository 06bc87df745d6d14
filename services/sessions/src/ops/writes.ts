import {
  encodeJson,
  GatewayError,
  given,
  isGatewayError,
  type SessionsAppendRequest,
  type SessionsAppendResponse,
  type SessionsPatchRequest,
  type SessionsPatchResponse,
  THINKING_LEVELS,
} from "@gw/contracts";
import { fromNew, toEntry, toSummary } from "../convert.js";
import type { SessionsDeps } from "./deps.js";
import type { Batch, SessionMeta, Tip } from "../model.js";
import { checkKey, ENTRY_ROLES, MAX_APPEND_ENTRIES } from "../validate.js";
import { ensureSession, notFound, requireSession } from "./lookup.js";

/** The operations that change a session: append (the runner), patch, reset and delete (clients). */

function checkEntries(req: SessionsAppendRequest): void {
  if (req.entries.length > MAX_APPEND_ENTRIES)
    throw new GatewayError("INVALID_REQUEST", `at most ${MAX_APPEND_ENTRIES} entries per append`);
  for (const e of req.entries) {
    if (!ENTRY_ROLES.has(e.role))
      throw new GatewayError("INVALID_REQUEST", `entry role must be one of ${[...ENTRY_ROLES].join(", ")}`);
  }
}

export async function appendEntries(
  deps: SessionsDeps,
  req: SessionsAppendRequest,
): Promise<SessionsAppendResponse> {
  checkKey(req.key);
  checkEntries(req);
  let { meta, created } = await ensureSession(deps, req.key, req.agentId);
  if (req.entries.length === 0) return { session: toSummary(meta), entries: [], created };
  const build = (tip: Tip): Batch => {
    const at = deps.now();
    let parentId = tip.leafId;
    const entries = req.entries.map((e) => {
      const placed = fromNew(e, { id: deps.newId(), parentId, timestamp: at });
      parentId = placed.id;
      return placed;
    });
    return { gen: meta.gen, base: false, count: tip.count + entries.length, at, entries };
  };
  for (let attempt = 0; ; attempt++) {
    try {
      const { batch, meta: after } = await deps.repo.append(meta, build);
      return { session: toSummary(after), entries: batch.entries.map(toEntry), created };
    } catch (err) {
      // Deleted between our lookup and the write: the key's next use starts a new session.
      if (!isGatewayError(err) || err.code !== "NOT_FOUND" || attempt > 0) throw err;
      ({ meta, created } = await ensureSession(deps, req.key, req.agentId));
    }
  }
}

/** The patch's fields as given (absent, or "" from an older edge, is "leave it alone"). */
interface Patch {
  agentId: string | undefined;
  model: string | undefined;
  thinking: string | undefined;
}

function checkPatch(deps: SessionsDeps, req: SessionsPatchRequest): Patch {
  checkKey(req.key);
  const [model, thinking] = [given(req.model), given(req.thinking)];
  if (thinking !== undefined && !(THINKING_LEVELS as readonly string[]).includes(thinking))
    throw new GatewayError("INVALID_REQUEST", "thinking must be one of low, medium, high");
  // One reference or a fallback chain in its one-string form ("a/x,b/y"), each checked.
  for (const ref of model?.split(",") ?? []) {
    if (!/^[a-z0-9][a-z0-9_-]*\/\S+$/.test(ref))
      throw new GatewayError("INVALID_REQUEST", 'model must look like "<provider>/<model>"');
    // Every later run of the session would fail on a provider nobody configured.
    const provider = ref.slice(0, ref.indexOf("/"));
    if (!deps.agents.hasProvider(provider))
      throw new GatewayError("INVALID_REQUEST", `params.model: unknown model provider "${provider}"`);
  }
  const agentId = given(req.agentId);
  return { agentId: agentId === undefined ? undefined : deps.agents.resolve(agentId), model, thinking };
}

/** The settings `patch` changes on `current`; a new agent brings its model unless one is given. */
function diff(deps: SessionsDeps, patch: Patch, current: SessionMeta) {
  const changes: Record<string, string> = {};
  if (patch.agentId !== undefined && patch.agentId !== current.agentId) {
    changes.agentId = patch.agentId;
    const model = patch.model ?? deps.agents.modelOf(patch.agentId);
    if (model !== current.model) changes.model = model;
  }
  if (patch.model !== undefined && patch.model !== current.model) changes.model = patch.model;
  if (patch.thinking !== undefined && patch.thinking !== current.thinking) changes.thinking = patch.thinking;
  return changes;
}

export async function patchSession(deps: SessionsDeps, req: SessionsPatchRequest): Promise<SessionsPatchResponse> {
  const patch = checkPatch(deps, req);
  let changes: Record<string, string> = {};
  const result = await deps.repo.updateMeta(req.key, (current) => {
    // Recomputed on every attempt: a retry after a concurrent patch must report what it changed.
    changes = diff(deps, patch, current);
    if (Object.keys(changes).length === 0) return undefined;
    return { ...current, ...changes, updatedAt: Math.max(current.updatedAt, deps.now()) };
  });
  if (!result) throw notFound(req.key);
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
  if (!(await deps.repo.delete(checkKey(key)))) throw notFound(key);
  return { deleted: true };
}
