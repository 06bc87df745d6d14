import type { SessionMeta, Tip } from "../model.js";

/** The metadata once the history ends at `tip`, written at `at`. */
export function withHistory(meta: SessionMeta, tip: Tip, at: number): SessionMeta {
  return {
    ...meta,
    messageCount: tip.count,
    leafId: tip.leafId,
    updatedAt: Math.max(meta.updatedAt, at),
  };
}
