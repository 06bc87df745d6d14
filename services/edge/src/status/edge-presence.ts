import type { Logger } from "@gw/runtime";
import type { FastStore } from "@gw/store";
import { z } from "zod";

const EDGES_KEY = "edges:seen";
const edgeKey = (edgeId: string) => `edge:{${edgeId}}`;

/**
 * The FastStore keys of edge presence (a value per edge and the set of ids), which every edge
 * writes on its own timer whatever its clients do: a check that clients wrote nothing skips them.
 */
export function isEdgePresenceKey(key: string): boolean {
  return key === EDGES_KEY || /^edge:\{[^}]*\}$/.test(key);
}
/** How often an edge says it is there; its entry outlives three missed beats. */
const BEAT_MS = 5_000;
const ENTRY_TTL_MS = 4 * BEAT_MS;
/** The set of ids outlives its entries so a quiet deployment forgets edges that went away. */
const SET_TTL_MS = 3_600_000;

const EdgeSeenSchema = z.object({
  edgeId: z.string(),
  version: z.string(),
  startedAt: z.number(),
  seenAt: z.number(),
  connections: z.number(),
  draining: z.boolean(),
});
export type EdgeSeen = z.output<typeof EdgeSeenSchema>;

/**
 * Which edges are up, for `gateway.status`: each edge writes an entry with a short TTL to the
 * FastStore every few seconds and removes it when it closes; the list is the entries still
 * there. An edge that dies drops out within ENTRY_TTL_MS.
 */
export class EdgePresence {
  private readonly startedAt = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      store: FastStore;
      edgeId: string;
      version: string;
      logger: Logger;
      connections: () => number;
      draining: () => boolean;
    },
  ) {}

  start(): void {
    this.beat();
    this.timer = setInterval(() => this.beat(), BEAT_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    const { store, edgeId } = this.deps;
    await Promise.all([store.values.delete(edgeKey(edgeId)), store.sets.remove(EDGES_KEY, edgeId)]).catch(() => undefined);
  }

  /** The edges whose entry is still there, by id. */
  async list(): Promise<EdgeSeen[]> {
    const { store } = this.deps;
    const ids = await store.sets.members(EDGES_KEY);
    if (ids.length === 0) return [];
    const raws = await store.values.getMany(ids.map(edgeKey));
    const seen: EdgeSeen[] = [];
    const gone: string[] = [];
    raws.forEach((raw, i) => {
      const parsed = raw === null || raw === undefined ? undefined : EdgeSeenSchema.safeParse(JSON.parse(raw));
      if (parsed?.success) seen.push(parsed.data);
      else gone.push(ids[i]!);
    });
    await Promise.all(gone.map((id) => store.sets.remove(EDGES_KEY, id)));
    return seen.sort((a, b) => a.edgeId.localeCompare(b.edgeId));
  }

  /** Best effort: a missed beat only shortens how long the entry lives. */
  private beat(): void {
    const { store, edgeId, version } = this.deps;
    const entry: EdgeSeen = {
      edgeId,
      version,
      startedAt: this.startedAt,
      seenAt: Date.now(),
      connections: this.deps.connections(),
      draining: this.deps.draining(),
    };
    Promise.all([
      store.values.set(edgeKey(edgeId), JSON.stringify(entry), { ttlMs: ENTRY_TTL_MS }),
      store.sets.add(EDGES_KEY, edgeId, SET_TTL_MS),
    ]).catch((err: unknown) => this.deps.logger.debug({ err: (err as Error).message }, "cannot record this edge's presence"));
  }
}
