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

/**
 * Who may call which is the permission table's (auth/permissions.ts): reading and watching a
 * session is open to every role, within the connection's session scope; listing and changing
 * sessions is control's.
 */
export function sessionMethods(deps: BusDeps) {
  const opts = { timeoutMs: deps.requestTimeoutMs };
  const call = <Req, Res>(def: Parameters<typeof callRpc<Req, Res>>[2], req: Req) =>
    callRpc(deps.bus, deps.subjects, def, req, opts);
  return [
    defineMethod({
      name: "sessions.list",
      params: SessionsListParamsSchema,
      // The hot reads chain with `then` rather than `await`: a promise fewer per call.
      handler: (p) =>
        call(RPC.sessionsList, { agentId: p.agentId, limit: p.limit, offset: p.offset }).then((res) => ({ sessions: res.sessions.map(sessionSummaryView), total: res.total })),
    }),
    defineMethod({
      name: "sessions.preview",
      params: SessionsPreviewParamsSchema,
      handler: (p, ctx) => {
        ctx.assertSession(p.key);
        return call(RPC.sessionsPreview, { key: p.key, limit: p.limit }).then((res) => {
          ctx.watchSession(p.key);
          return receivedJson<SessionPreviewView>(res.viewJson);
        });
      },
    }),
    defineMethod({
      name: "sessions.patch",
      params: SessionsPatchParamsSchema,
      handler: async (p, ctx) => {
        // Watch first, so the caller also receives the session.updated this patch emits.
        ctx.watchSession(p.key);
        const res = await call(RPC.sessionsPatch, { key: p.key, agentId: p.agentId, model: p.model, thinking: p.thinking });
        const changes = decodeJson(res.changesJson, SessionChangesSchema, "session changes on the bus");
        return { updated: res.updated, changes };
      },
    }),
    defineMethod({
      name: "sessions.reset",
      params: SessionKeyParamsSchema,
      handler: async (p, ctx) => {
        const res = await call(RPC.sessionsReset, { key: p.key });
        ctx.watchSession(p.key);
        return { reset: res.reset };
      },
    }),
    defineMethod({
      name: "sessions.delete",
      params: SessionKeyParamsSchema,
      handler: async (p, ctx) => {
        const res = await call(RPC.sessionsDelete, { key: p.key });
        ctx.unwatchSession(p.key);
        return { deleted: res.deleted };
      },
    }),
    defineMethod({
      name: "sessions.compact",
      params: SessionKeyParamsSchema,
      handler: async (p, ctx) => {
        const res = await call(RPC.sessionsCompact, { key: p.key });
        ctx.watchSession(p.key);
        return { compacted: res.compacted, beforeSize: res.beforeSize, afterSize: res.afterSize };
      },
    }),
    defineMethod({
      name: "sessions.subscribe",
      params: SessionKeyParamsSchema,
      // No lookup: a client may watch a key before its first use to see session.created.
      handler: async (p, ctx) => {
        ctx.assertSession(p.key);
        ctx.watchSession(p.key);
        return { subscribed: true, key: p.key };
      },
    }),
    defineMethod({
      name: "sessions.unsubscribe",
      params: SessionKeyParamsSchema,
      handler: async (p, ctx) => {
        ctx.unwatchSession(p.key);
        return { unsubscribed: true, key: p.key };
      },
    }),
  ];
}
