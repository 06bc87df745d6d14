/**
 * The sessions the Sessions view shows: pages of `sessions.list` (newest first) merged with what
 * arrives live (`session.created`, `session.updated`) and what this page deleted. No DOM, so the
 * merging is tested on its own.
 */
import type { SessionSummary } from "@gw/client";

/** A row of the list: a session summary as sessions.list and session events give it. */
export type SessionRow = SessionSummary;

export const PAGE_SIZE = 50;

export class SessionList {
  private rows: SessionRow[] = [];
  private total = 0;

  /** An empty list for `agentId` ("" for every agent), before its first page. */
  constructor(readonly agentId = "") {}

  get size(): number {
    return this.total;
  }

  /**
   * Where the next page starts. Sessions created since the first page sit on top of the
   * gateway's order as they sit on top of this list, so the count of rows held is the offset;
   * a row that comes round twice (a session that moved) is kept once.
   */
  get nextOffset(): number {
    return this.rows.length;
  }

  get hasMore(): boolean {
    return this.rows.length < this.total;
  }

  /** A page the gateway answered, appended; `total` is the gateway's count. */
  addPage(page: readonly SessionRow[], total: number): void {
    const held = new Set(this.rows.map((row) => row.key));
    this.rows.push(...page.filter((row) => !held.has(row.key)));
    this.total = Math.max(total, this.rows.length);
  }

  /** `session.created`: on top, unless it is another agent's or already held. */
  created(key: string, agentId: string, now: number): boolean {
    if ((this.agentId !== "" && agentId !== this.agentId) || this.rows.some((row) => row.key === key)) return false;
    this.rows.unshift({ key, agentId, model: "", createdAt: now, updatedAt: now, messageCount: 0 });
    this.total += 1;
    return true;
  }

  /** `session.updated`: its changed settings; a session that moved to another agent leaves a filtered list. */
  updated(key: string, changes: Readonly<Record<string, string>>, now: number): boolean {
    const row = this.rows.find((r) => r.key === key);
    if (row === undefined) return false;
    if (this.agentId !== "" && changes.agentId !== undefined && changes.agentId !== this.agentId) return this.removed(key);
    if (changes.agentId !== undefined) row.agentId = changes.agentId;
    if (changes.model !== undefined) row.model = changes.model;
    if (changes.thinking !== undefined) row.thinking = changes.thinking;
    row.updatedAt = Math.max(row.updatedAt, now);
    return true;
  }

  removed(key: string): boolean {
    const before = this.rows.length;
    this.rows = this.rows.filter((row) => row.key !== key);
    if (this.rows.length === before) return false;
    this.total = Math.max(0, this.total - 1);
    return true;
  }

  get(key: string): SessionRow | undefined {
    return this.rows.find((row) => row.key === key);
  }

  /** The held rows whose key contains `search` (any case), newest first. */
  matching(search: string): readonly SessionRow[] {
    const needle = search.trim().toLowerCase();
    return needle === "" ? this.rows : this.rows.filter((row) => row.key.toLowerCase().includes(needle));
  }
}
