import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createSubjects, InProcessBus, serveRpc } from "@gw/bus";
import { defaultConfig } from "@gw/config";
import { GATEWAY_VERSION, RPC } from "@gw/contracts";
import { createLogger, createMetrics } from "@gw/runtime";
import { InProcessRunEventLog, InProcessRunQueue, RunRegistry } from "@gw/runs";
import { createFileDurableStore, createMemoryFastStore, type FastStore } from "@gw/store";
import { isEdgePresenceKey } from "../src/status/edge-presence.js";
import { type Edge, startEdge } from "../src/edge.js";

export const FUZZ_TOKEN = "fuzz-token-0123456789";

/** Every call that would change the fast store, by `store.method`. */
export type WriteLog = string[];

const WRITE_METHODS = new Set(["begin", "complete", "abandon", "hit", "giveBack", "reset", "add", "remove", "set", "delete", "acquire", "renew", "release"]);

function recordWrites<T extends object>(name: string, target: T, writes: WriteLog): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      const value = Reflect.get(t, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        // The edge's own presence beat (gateway.status) is not a client's doing.
        const presence = typeof args[0] === "string" && isEdgePresenceKey(args[0]);
        if (WRITE_METHODS.has(String(prop)) && !presence) writes.push(`${name}.${String(prop)}`);
        return (value as (...a: unknown[]) => unknown).apply(t, args);
      };
    },
  });
}

function watchedStore(inner: FastStore, writes: WriteLog): FastStore {
  return {
    idempotency: recordWrites("idempotency", inner.idempotency, writes),
    counters: recordWrites("counters", inner.counters, writes),
    sets: recordWrites("sets", inner.sets, writes),
    values: recordWrites("values", inner.values, writes),
    leases: recordWrites("leases", inner.leases, writes),
    isHealthy: () => inner.isHealthy(),
    close: () => inner.close(),
  };
}

export interface FuzzEdge {
  edge: Edge;
  url: string;
  httpUrl: string;
  writes: WriteLog;
  logs: string[];
  close(): Promise<void>;
}

/**
 * A real edge on a free loopback port with the in-process bus, the memory store (watched for
 * writes) and a stand-in agent runner, so the fuzz suite needs no other service.
 */
export async function startFuzzEdge(limits: Record<string, number> = {}): Promise<FuzzEdge> {
  const config = defaultConfig({ gateway: { auth: { token: FUZZ_TOKEN }, limits } });
  const bus = new InProcessBus();
  const subjects = createSubjects();
  const writes: WriteLog = [];
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      if (logs.length < 10_000) logs.push(String(chunk));
      done();
    },
  });
  const fastStore = createMemoryFastStore();
  const watched = watchedStore(fastStore, writes);
  // Runs go nowhere: the generators leave out valid calls of methods that change state (agent).
  const runQueue = new InProcessRunQueue();
  const stopAgents = serveRpc(bus, subjects, RPC.agentsList, () => ({
    agents: [{ id: "main", name: "Main", model: "builtin/echo", description: "" }],
    defaultAgentId: "main",
  }));
  // Paired devices: only approvals, rotations and revocations write here, valid calls of
  // state-changing methods the generators leave out.
  const durableDir = mkdtempSync(join(tmpdir(), "gw-fuzz-durable-"));
  const durable = await createFileDurableStore(durableDir);
  const edge = await startEdge(
    {
      config,
      bus,
      subjects,
      fastStore: watched,
      durable,
      runs: { queue: runQueue, registry: new RunRegistry(watched), events: new InProcessRunEventLog({ bus, subjects }, { maxAgeMs: 60_000, maxBytes: 1_048_576 }) },
      logger: createLogger({ service: "edge", level: "info", destination: sink }),
      metrics: createMetrics({ service: "edge", collectDefault: false }),
      edgeId: "fuzz",
      version: GATEWAY_VERSION,
      isHealthy: () => true,
    },
    { host: "127.0.0.1", port: 0 },
  );
  return {
    edge,
    url: `ws://127.0.0.1:${edge.port}/`,
    httpUrl: `http://127.0.0.1:${edge.port}`,
    writes,
    logs,
    close: async () => {
      await edge.close();
      stopAgents();
      await runQueue.close();
      await bus.close();
      await fastStore.close();
      await durable.close();
      rmSync(durableDir, { recursive: true, force: true });
    },
  };
}
