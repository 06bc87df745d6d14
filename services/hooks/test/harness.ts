import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Bus, callRpc, createSubjects, InProcessBus, type RpcDefinition, type Subjects } from "@gw/bus";
import { type GatewayConfig, parseConfig } from "@gw/config";
import {
  type CronAnswer,
  type CronCall,
  DeliveryEnqueueRequest,
  DeliveryEnqueueResponse,
  encodeMessage,
  GatewayError,
  type HookAccepted,
  type HookAgentRequest,
  RPC,
  type RunRequest,
} from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { InProcessRunQueue, type RunQueue, RunRegistry } from "@gw/runs";
import { createFileDurableStore, createMemoryFastStore, type DurableStore, type FastStore } from "@gw/store";
import { type HooksService, startHooksService } from "../src/index.js";

/** A run queue that refuses the next `failures` submits, as a JetStream outage would. */
export class FlakyQueue implements RunQueue {
  failures = 0;
  /** Every request offered, accepted or not. */
  readonly offered: RunRequest[] = [];
  constructor(private readonly inner: RunQueue) {}
  async submit(request: RunRequest): Promise<void> {
    this.offered.push(request);
    if (this.failures > 0) {
      this.failures--;
      throw new GatewayError("UNAVAILABLE", "the run queue is away");
    }
    await this.inner.submit(request);
  }
  consume: RunQueue["consume"] = (handler, opts) => this.inner.consume(handler, opts);
  depth = () => this.inner.depth();
  close = () => this.inner.close();
}

export interface Harness {
  config: GatewayConfig;
  bus: Bus;
  subjects: Subjects;
  fastStore: FastStore;
  durable: DurableStore;
  queue: FlakyQueue;
  registry: RunRegistry;
  /** Every run request a "runner" took off the queue, in order. */
  runs: RunRequest[];
  /** Destinations the fake delivery service was asked to check. */
  deliveryChecks: DeliveryEnqueueRequest[];
  service: HooksService;
  /** Starts another replica of the hooks service on the same stores and bus. */
  replica(id: string): Promise<HooksService>;
  wake(text: string, mode?: string, idempotencyKey?: string): Promise<HookAccepted>;
  agent(req: Partial<HookAgentRequest>): Promise<HookAccepted>;
  mapping(path: string, payload: unknown, more?: { headers?: Record<string, string>; query?: Record<string, string>; idempotencyKey?: string }): Promise<HookAccepted>;
  /** One of the cron.* methods (RPC.cronAdd...), params and answer as JSON. */
  cron(def: RpcDefinition<CronCall, CronAnswer>, params: object): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * The hooks service on the in-process bus, memory FastStore and files, with a pretend runner
 * that records every run it is handed, and a pretend delivery service that accepts the
 * destinations of channel `tg` only.
 */
export async function startHarness(hooks: Record<string, unknown> = {}, opts: { replicaId?: string } = {}): Promise<Harness> {
  const config = parseConfig(
    JSON.stringify({
      hooks: { enabled: true, token: "hook-secret", ...hooks },
      agents: { default: "main", list: [{ id: "main", name: "Main", model: "builtin/echo" }, { id: "ops", name: "Ops", model: "builtin/echo" }] },
      channels: { default: "tg", tg: { kind: "telegram", botToken: "bot" } },
    }),
    { env: {} },
  );
  const logger = createLogger({ service: "hooks-test", level: "silent" });
  const bus = new InProcessBus();
  const subjects = createSubjects("gw");
  const fastStore = createMemoryFastStore();
  const dir = await mkdtemp(join(tmpdir(), "hooks-test-"));
  const durable = await createFileDurableStore(dir);
  const queue = new FlakyQueue(new InProcessRunQueue());
  const registry = new RunRegistry(fastStore);
  const runs: RunRequest[] = [];
  const consumer = queue.consume(
    async (request, taken) => {
      runs.push(request);
      taken();
    },
    { maxConcurrent: 1_000 },
  );
  const deliveryChecks: DeliveryEnqueueRequest[] = [];
  bus.handle(subjects.rpc(RPC.deliveryEnqueue.service, RPC.deliveryEnqueue.method), (data) => {
    const req = DeliveryEnqueueRequest.decode(data);
    deliveryChecks.push(req);
    const message = req.message!;
    const channel = message.channel || "tg";
    if (channel !== "tg") throw new GatewayError("CHANNEL_NOT_FOUND", `unknown channel: ${channel}`);
    if (message.to === "" && !(message.sessionKey ?? "").startsWith("tg:")) {
      throw new GatewayError("INVALID_REQUEST", "to is required (no recipient given, and the session key names none)");
    }
    return encodeMessage(DeliveryEnqueueResponse, { jobId: "", duplicate: false });
  });
  const replicas: HooksService[] = [];
  const replica = async (replicaId: string) => {
    const service = await startHooksService({ config, bus, subjects, fastStore, durable, runs: { queue, registry }, logger, replicaId });
    replicas.push(service);
    return service;
  };
  const close = async () => {
    for (const r of replicas) await r.stop();
    await consumer.stop();
    await queue.close();
    await bus.close();
    await durable.close();
    await fastStore.close();
    await rm(dir, { recursive: true, force: true });
  };
  let service: HooksService;
  try {
    service = await replica(opts.replicaId ?? "replica-a");
  } catch (err) {
    await close();
    throw err;
  }
  const call = { timeoutMs: 10_000 };
  return {
    config,
    bus,
    subjects,
    fastStore,
    durable,
    queue,
    registry,
    runs,
    deliveryChecks,
    service,
    replica,
    wake: (text, mode = "now", idempotencyKey?: string) => callRpc(bus, subjects, RPC.hooksWake, { text, mode, idempotencyKey }, call),
    agent: (req) =>
      callRpc(
        bus,
        subjects,
        RPC.hooksAgent,
        { message: "", deliver: false, wakeMode: "now", ...req },
        call,
      ),
    mapping: (path, payload, more = {}) =>
      callRpc(
        bus,
        subjects,
        RPC.hooksMapping,
        {
          path,
          payloadJson: Buffer.from(JSON.stringify(payload)),
          headers: more.headers ?? {},
          query: more.query ?? {},
          idempotencyKey: more.idempotencyKey,
        },
        call,
      ),
    cron: async (def, params) => {
      const answer = await callRpc(bus, subjects, def, { paramsJson: Buffer.from(JSON.stringify(params)) }, call);
      return JSON.parse(Buffer.from(answer.resultJson).toString("utf8")) as Record<string, unknown>;
    },
    close,
  };
}
