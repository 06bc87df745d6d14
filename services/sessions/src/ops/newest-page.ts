import type { SessionMeta } from "../model.js";

/** Newest first; the key breaks ties so pages never overlap or skip. */
export function newestFirst(a: SessionMeta, b: SessionMeta): number {
  return b.updatedAt - a.updatedAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/**
 * One page of `items` in newest-first order without sorting them all: a page near the top
 * (the usual `sessions.list`) keeps only the best `offset + limit` in a sorted buffer, so a
 * list over many sessions costs one pass instead of a full sort per call.
 */
export function newestPage(items: readonly SessionMeta[], offset: number, limit: number): SessionMeta[] {
  const keep = offset + limit;
  if (keep >= items.length / 4) return [...items].sort(newestFirst).slice(offset, keep);
  const top: SessionMeta[] = [];
  for (const item of items) {
    if (top.length === keep && newestFirst(item, top[keep - 1]!) >= 0) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (newestFirst(top[mid]!, item) <= 0) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, item);
    if (top.length > keep) top.pop();
  }
  return top.slice(offset);
}
