import { callRpc, type RpcDefinition } from "@gw/bus";
import {
  CronAddParamsSchema,
  type CronAnswer,
  type CronCall,
  CronIdParamsSchema,
  CronListParamsSchema,
  CronUpdateParamsSchema,
  encodeJson,
  type MethodName,
  type MethodResultOf,
  receivedJson,
  RPC,
} from "@gw/contracts";
import type { z } from "zod";
import type { BusDeps } from "../bus-deps.js";
import { defineMethod } from "./registry.js";

/**
 * Scheduled runs (cron.*): the hooks service owns the jobs and their firings; the edge checks
 * the params' shape and forwards them, and its answer goes to the client as the service wrote
 * it. Control connections only (auth/permissions.ts): a job runs agents with no one asking.
 */
export function cronMethods(deps: BusDeps) {
  const method = <N extends MethodName, S extends z.ZodType>(name: N, params: S, rpc: RpcDefinition<CronCall, CronAnswer>) =>
    defineMethod({
      name,
      params,
      handler: async (valid: z.output<S>) => {
        const res = await callRpc(deps.bus, deps.subjects, rpc, { paramsJson: encodeJson(valid) }, { timeoutMs: deps.requestTimeoutMs });
        return receivedJson<MethodResultOf<N>>(res.resultJson);
      },
    });
  return [
    method("cron.list", CronListParamsSchema, RPC.cronList),
    method("cron.add", CronAddParamsSchema, RPC.cronAdd),
    method("cron.update", CronUpdateParamsSchema, RPC.cronUpdate),
    method("cron.remove", CronIdParamsSchema, RPC.cronRemove),
    method("cron.run", CronIdParamsSchema, RPC.cronRun),
  ];
}
