import type { NewSessionEntry, SessionEntry, SessionSummary } from "@gw/contracts";
import type { SessionMeta, StoredEntry } from "./model.js";

export function toSummary(meta: SessionMeta): SessionSummary {
  return {
    key: meta.key,
    agentId: meta.agentId,
    model: meta.model,
    thinking: meta.thinking,
    createdAt: meta.createdAt,
    updatedAt: meta.updatedAt,
    messageCount: meta.messageCount,
  };
}

export function toEntry(e: StoredEntry): SessionEntry {
  return {
    id: e.id,
    parentId: e.parentId,
    role: e.role,
    sender: e.sender,
    body: e.body,
    timestamp: e.timestamp,
    runId: e.runId,
    kind: e.kind,
    metaJson: e.meta === "" ? Buffer.alloc(0) : Buffer.from(e.meta, "base64"),
  };
}

/** A new entry as stored; id, parent and timestamp are given by the append that places it. */
export function fromNew(
  e: NewSessionEntry,
  place: { id: string; parentId: string; timestamp: number },
): StoredEntry {
  return {
    ...place,
    role: e.role,
    sender: e.sender,
    body: e.body,
    runId: e.runId,
    kind: "message",
    meta: e.metaJson.length === 0 ? "" : Buffer.from(e.metaJson).toString("base64"),
  };
}
