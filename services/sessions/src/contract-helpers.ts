import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { type Batch, newSessionMeta, type SessionMeta, type StoredEntry, type Tip } from "./model.js";

// The sessions, entries and batches the repository tests write, built as the service builds them.

export const AWKWARD_KEYS = [
  "telegram:@ops",
  "signal:+15551234567",
  "slack:#general",
  "imessage:user@example.com",
  "agent:main:telegram:direct",
  "hook:a.b.*.>",
  "web:with space/and/slashes",
  `user:${"ü".repeat(200)}`,
];

export function newMeta(key: string, now = Date.now()): SessionMeta {
  return newSessionMeta(key, "main", "builtin/echo", now);
}

/** One user message after `parentId`. */
export function textEntry(body: string, parentId: string): StoredEntry {
  const id = randomUUID();
  return { id, parentId, role: "user", sender: "t", body, timestamp: Date.now(), runId: "", kind: "message", meta: "" };
}

/** A batch of `bodies` placed after `tip`, as the service builds them. */
export function textBatch(meta: SessionMeta, bodies: string[]): (tip: Tip) => Batch {
  return (tip) => {
    let parent = tip.leafId;
    const entries = bodies.map((b) => {
      const e = textEntry(b, parent);
      parent = e.id;
      return e;
    });
    return { gen: meta.gen, base: false, count: tip.count + entries.length, at: Date.now(), entries };
  };
}

/** Every entry's parent is the one before it: one linear chain, no fork, nothing lost. */
export function expectChain(entries: StoredEntry[], bodies?: string[]): void {
  entries.forEach((e, i) => expect(e.parentId).toBe(i === 0 ? "" : entries[i - 1]!.id));
  expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
  if (bodies) expect(entries.map((e) => e.body)).toEqual(bodies);
}
