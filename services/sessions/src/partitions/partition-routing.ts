import {
  type Bus,
  callRpc,
  NoServiceAnswers,
  type RequestContext,
  type RpcDefinition,
  type Subjects,
  serveRpc,
  type Unsubscribe,
} from "@gw/bus";
import { partitionOf } from "./partition.js";
import { PartitionOwners } from "./partition-owners.js";

/** Serves one keyed request; `ctx.deadline` is the original caller's, also when passed on to the owner. */
export type KeyedHandler<Req, Res> = (req: Req, ctx: RequestContext) => Promise<Res>;

/** A sessions RPC about one session: its partition follows from the request's key. */
export interface KeyedRpc {
  /** Serves the RPC on its usual subject (queue group `sessions`), routing it to the owner. */
  serve(): Unsubscribe;
  /** Serves the RPC on partition `p`'s subject (queue group `sessions-p<p>`), always here. */
  servePartition(p: number): Unsubscribe;
}

const partitionDef = <Req, Res>(def: RpcDefinition<Req, Res>, p: number): RpcDefinition<Req, Res> => ({
  ...def,
  service: `${def.service}-p${p}`,
  owner: def.owner ?? def.service,
});

/**
 * Sends each keyed sessions request to the replica that owns the key's partition, so one
 * replica's caches see all of a session's traffic. The request arrives on the usual subject at
 * any replica; one that does not own the partition passes it on to `<prefix>.rpc.sessions-p<p>.<method>`,
 * where only the owner listens. When no owner listens (replicas coming and going) the receiving
 * replica serves it itself from storage. The owner answers metadata and tails from memory, kept
 * current by a watch of each owned partition (jetstream/owned-partitions.ts): its own writes at
 * once, a write another replica made while ownership moved a moment later.
 */
export class PartitionRouter {
  private readonly owners: PartitionOwners;
  private readonly routes: KeyedRpc[] = [];
  private readonly served = new Map<number, Unsubscribe[]>();

  constructor(
    private readonly deps: {
      bus: Bus;
      subjects: Subjects;
      partitions: number;
      /** Told the partitions this replica serves after every change, once it listens on their subjects. */
      onOwned?: (owned: ReadonlySet<number>) => void;
    },
  ) {
    this.owners = new PartitionOwners({ ...deps, onChange: (owned) => this.follow(owned) });
  }

  keyed<Req extends { key: string }, Res>(def: RpcDefinition<Req, Res>, handle: KeyedHandler<Req, Res>): KeyedRpc {
    const { bus, subjects, partitions } = this.deps;
    const route: KeyedRpc = {
      serve: () =>
        serveRpc(bus, subjects, def, async (req, ctx) => {
          const p = partitionOf(req.key, partitions);
          if (this.owners.owns(p)) return handle(req, ctx);
          try {
            return await callRpc(bus, subjects, partitionDef(def, p), req, { timeoutMs: Math.max(1, ctx.deadline - Date.now()) });
          } catch (err) {
            // Nobody listens there right now: the request ran nowhere, so it runs here.
            if (err instanceof NoServiceAnswers) return handle(req, ctx);
            throw err;
          }
        }),
      servePartition: (p) => serveRpc(bus, subjects, partitionDef(def, p), (req, ctx) => handle(req, ctx)),
    };
    this.routes.push(route);
    return route;
  }

  /** Starts announcing this replica and serving the partitions it owns. */
  start(): void {
    this.owners.start();
  }

  stop(): void {
    this.owners.stop();
    this.follow(new Set());
  }

  private follow(owned: ReadonlySet<number>): void {
    for (const [p, stops] of this.served) {
      if (owned.has(p)) continue;
      for (const stop of stops) stop();
      this.served.delete(p);
    }
    for (const p of owned) {
      if (!this.served.has(p)) this.served.set(p, this.routes.map((route) => route.servePartition(p)));
    }
    this.deps.onOwned?.(owned);
  }
}
