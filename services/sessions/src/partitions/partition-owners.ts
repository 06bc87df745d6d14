import { createHash, randomUUID } from "node:crypto";
import type { Bus, Subjects, Unsubscribe } from "@gw/bus";
import { readStoredJson } from "@gw/contracts";
import { z } from "zod";

/** How often a replica says it is alive, and how long it counts as alive after it last did. */
export const HEARTBEAT_MS = 1_000;
const ALIVE_FOR_MS = 3_500;

interface Announcement {
  id: string;
  leaving?: boolean;
}

/** What a replica announces (extra keys are ignored; one that does not decode is not heard). */
const AnnouncementSchema = z.object({ id: z.string(), leaving: z.boolean().optional() }) satisfies z.ZodType<Announcement>;

/**
 * Which partitions this sessions replica owns: every replica announces itself on
 * `<prefix>.bcast.sessions-members` each second, and each partition goes to the live replica with
 * the highest hash of (replica, partition) (rendezvous hashing), so all replicas agree once they
 * have heard each other, and a replica coming or going moves only its share of the partitions.
 * Agreement is not needed for correctness: while views differ a partition may have two owners
 * or none for a moment, and the callers of `routePartition` fall back to serving it themselves.
 */
export class PartitionOwners {
  readonly id = randomUUID();
  private readonly seen = new Map<string, number>();
  private owned = new Set<number>();
  private stops: Unsubscribe[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      bus: Bus;
      subjects: Subjects;
      partitions: number;
      /** Told the owned set after every change (first with every partition: alone, it owns them all). */
      onChange: (owned: ReadonlySet<number>) => void;
      now?: () => number;
    },
  ) {}

  start(): void {
    const subject = this.deps.subjects.broadcast("sessions-members");
    const announce = () => this.deps.bus.publish(subject, Buffer.from(JSON.stringify({ id: this.id })));
    this.stops.push(
      this.deps.bus.subscribe(subject, (data) => {
        const said = parse(data);
        if (!said || said.id === this.id) return;
        const known = this.seen.has(said.id);
        if (said.leaving) this.seen.delete(said.id);
        else this.seen.set(said.id, this.now());
        // A newcomer hears of this replica now rather than at the next heartbeat.
        if (!known && !said.leaving) announce();
        this.recompute();
      }),
    );
    announce();
    this.recompute();
    this.timer = setInterval(() => {
      announce();
      this.recompute();
    }, HEARTBEAT_MS);
    this.timer.unref();
  }

  owns(partition: number): boolean {
    return this.owned.has(partition);
  }

  /** Says goodbye, so the others take this replica's partitions over at once. */
  stop(): void {
    clearInterval(this.timer);
    for (const stop of this.stops.splice(0)) stop();
    const subject = this.deps.subjects.broadcast("sessions-members");
    this.deps.bus.publish(subject, Buffer.from(JSON.stringify({ id: this.id, leaving: true })));
  }

  private recompute(): void {
    const now = this.now();
    for (const [id, at] of this.seen) if (now - at > ALIVE_FOR_MS) this.seen.delete(id);
    const live = [this.id, ...this.seen.keys()];
    const owned = new Set<number>();
    for (let p = 0; p < this.deps.partitions; p++) if (ownerOf(p, live) === this.id) owned.add(p);
    if (owned.size === this.owned.size && [...owned].every((p) => this.owned.has(p))) return;
    this.owned = owned;
    this.deps.onChange(owned);
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }
}

/** The replica among `live` that owns `partition`: the highest hash of (replica, partition). */
export function ownerOf(partition: number, live: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = "";
  for (const id of live) {
    const score = createHash("sha1").update(`${id}/${partition}`).digest("hex");
    if (best === undefined || score > bestScore) {
      best = id;
      bestScore = score;
    }
  }
  return best;
}

function parse(data: Uint8Array): Announcement | undefined {
  const read = readStoredJson(data, AnnouncementSchema);
  if (!read.ok) return undefined;
  return { id: read.value.id, ...(read.value.leaving ? { leaving: true } : {}) };
}
