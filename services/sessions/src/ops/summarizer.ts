import { type Bus, callRpc, type Subjects } from "@gw/bus";
import { RPC } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { extractiveSummary } from "./compaction.js";
import { toEntry } from "../convert.js";
import type { Summarizer } from "./deps.js";

const BUILTIN = "builtin/";

/**
 * Real models summarise through the agent runner (RPC.agentSummarize); builtin models, and any
 * failure to reach a runner that summarises, get the deterministic extractive summary, so a
 * compaction never fails because a model is away. A model gets `timeoutMs`, and at most half of
 * what is left before the caller's deadline, so the fallback still lands in time.
 */
export function createSummarizer(deps: {
  bus: Bus;
  subjects: Subjects;
  logger: Logger;
  timeoutMs: number;
}): Summarizer {
  return async (meta, older, deadline) => {
    if (meta.model.startsWith(BUILTIN)) return extractiveSummary(older);
    const timeoutMs = Math.min(deps.timeoutMs, Math.floor((deadline - Date.now()) / 2));
    if (timeoutMs < 1) return extractiveSummary(older);
    try {
      const res = await callRpc(
        deps.bus,
        deps.subjects,
        RPC.agentSummarize,
        {
          agentId: meta.agentId,
          model: meta.model,
          sessionKey: meta.key,
          entries: older.map(toEntry),
          maxChars: 4000,
        },
        { timeoutMs },
      );
      if (res.summary.trim() !== "") return res.summary;
    } catch (err) {
      deps.logger.warn({ err, key: meta.key }, "model summary unavailable; using the extractive summary");
    }
    return extractiveSummary(older);
  };
}
