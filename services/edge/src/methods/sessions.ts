import { callRpc } from "@gw/bus";
import {
  decodeJson,
  receivedJson,
  RPC,
  SessionChangesSchema,
  SessionKeyParamsSchema,
  type SessionPreviewView,
  SessionsListParamsSchema,
  SessionsPatchParamsSchema,
  SessionsPreviewParamsSchema,
  sessionSummaryView,
} from "@gw/contracts";
import type { BusDeps } from "../bus-deps.js";
import { defineMethod } from "./registry.js";

/** Reading and watching a session is open to every role; changing or listing sessions is control's. */
const ALL_ROLES = ["control", "node", "webchat"] as const;
const CONTROL = ["control"] as const;

export function sessionMethods(deps: BusDeps) {
  const opts = { timeoutMs: deps.requestTimeoutMs };
  const call = <Req, Res>(def: Parameters<typeof callRpc<Req, Res>>[2], req: Req) =>
    callRpc(deps.bus, deps.subjects, def, req, opts);
  return [
    defineMethod({
      name: "sessions.list",
      params: SessionsListParamsSchema,
      roles: CONTROL,
      handler: async (p) => {
        const res = await call(RPC.sessionsList, { agentId: p.agentId ?? "", limit: p.limit, offset: p.offset });
        return { sessions: res.sessions.map(sessionSummaryView), total: res.total };
      },
    }),
    defineMethod({
      name: "sessions.preview",
      params: SessionsPreviewParamsSchema,
      roles: ALL_ROLES,
      handler: async (p, ctx) => {
        const res = await call(RPC.sessionsPreview, { key: p.key, limit: p.limit });
        ctx.watchSession(p.key);
        return receivedJson<SessionPreviewView>(res.viewJson);
      },
    }),
    defineMethod({
      name: "sessions.patch",
      params: SessionsPatchParamsSchema,
      roles: CONTROL,
      handler: async (p, ctx) => {
        // Watch first, so the caller also receives the session.updated this patch emits.
        ctx.watchSession(p.key);
        const res = await call(RPC.sessionsPatch, {
          key: p.key,
          agentId: p.agentId ?? "",
          model: p.model ?? "",
          thinking: p.thinking ?? "",
        });
        const changes = decodeJson(res.changesJson, SessionChangesSchema, "session changes on the bus");
        return { updated: res.updated, changes };
      },
    }),
    defineMethod({
      name: "sessions.reset",
      params: SessionKeyParamsSchema,
      roles: CONTROL,
      handler: async (p, ctx) => {
        const res = await call(RPC.sessionsReset, { key: p.key });
        ctx.watchSession(p.key);
        return { reset: res.reset };
      },
    }),
    defineMethod({
      name: "sessions.delete",
      params: SessionKeyParamsSchema,
      roles: CONTROL,
      handler: async (p, ctx) => {
        const res = await call(RPC.sessionsDelete, { key: p.key });
        ctx.unwatchSession(p.key);
        return { deleted: res.deleted };
      },
    }),
    defineMethod({
      name: "sessions.compact",
      params: SessionKeyParamsSchema,
      roles: CONTROL,
      handler: async (p, ctx) => {
        const res = await call(RPC.sessionsCompact, { key: p.key });
        ctx.watchSession(p.key);
        return { compacted: res.compacted, beforeSize: res.beforeSize, afterSize: res.afterSize };
      },
    }),
    defineMethod({
      name: "sessions.subscribe",
      params: SessionKeyParamsSchema,
      roles: ALL_ROLES,
      // No lookup: a client may watch a key before its first use to see session.created.
      handler: async (p, ctx) => {
        ctx.watchSession(p.key);
        return { subscribed: true, key: p.key };
      },
    }),
    defineMethod({
      name: "sessions.unsubscribe",
      params: SessionKeyParamsSchema,
      roles: ALL_ROLES,
      handler: async (p, ctx) => {
        ctx.unwatchSession(p.key);
        return { unsubscribed: true, key: p.key };
      },
    }),
  ];
}
