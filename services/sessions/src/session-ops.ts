import { randomUUID } from "node:crypto";
import {
  GatewayError,
  isGatewayError,
  type SessionsAppendRequest,
  type SessionsAppendResponse,
  type SessionsHistoryRequest,
  type SessionsHistoryResponse,
} from "@gw/contracts";
import { fromNew, toEntry, toSummary } from "./convert.js";
import type { SessionsDeps } from "./deps.js";
import type { Batch, SessionMeta, Tip } from "./model.js";
import { checkKey, ENTRY_ROLES, MAX_APPEND_ENTRIES } from "./validate.js";

const notFound = (key: string) => new GatewayError("NOT_FOUND", `unknown session: ${key}`);

/** The session under `key`, created on first use; only the creating call publishes session.created. */
export async function ensureSession(
  deps: SessionsDeps,
  key: string,
  agentId: string,
): Promise<{ meta: SessionMeta; created: boolean }> {
  const existing = await deps.repo.getMeta(key);
  if (existing) return { meta: existing, created: false };
  const id = deps.agents.resolve(agentId);
  const now = deps.now();
  const result = await deps.repo.createMeta({
    key,
    agentId: id,
    model: deps.agents.modelOf(id),
    thinking: "",
    createdAt: now,
    updatedAt: now,
    messageCount: 0,
    leafId: "",
    gen: randomUUID(),
    historySeq: 0,
  });
  if (result.created) deps.events.created(key, id);
  return result;
}

export async function requireSession(deps: SessionsDeps, key: string): Promise<SessionMeta> {
  const meta = await deps.repo.getMeta(checkKey(key));
  if (!meta) throw notFound(key);
  return meta;
}

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
