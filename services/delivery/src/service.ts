import { randomUUID } from "node:crypto";
import { type Bus, serveRpc, type Subjects, type Unsubscribe } from "@gw/bus";
import type { GatewayConfig } from "@gw/config";
import { GatewayError, RPC } from "@gw/contracts";
import type { Logger, Metrics } from "@gw/runtime";
import type { RunQueue, RunRegistry } from "@gw/runs";
import { type DurableStore, type FastStore, RunOnce } from "@gw/store";
import { z } from "zod";
import { ChannelDirectory } from "./channel-directory.js";
import { ChannelStatusReporter } from "./channel-status.js";
import type { DeliveryPlugin, HttpClientFactory } from "./channels/registry.js";
import { Dispatcher } from "./outbound/dispatcher.js";
import { withMediaPolicy } from "./http-clients.js";
import { type Inbound, startInbound } from "./inbound/inbound-service.js";
import { startReceivers } from "./inbound/receive/receivers.js";
import { Outbox } from "./outbound/outbox.js";
import { Pacer } from "./outbound/pacer.js";
import { StatusBook } from "./status-book.js";

export interface DeliveryServiceDeps {
  config: GatewayConfig;
  bus: Bus;
  subjects: Subjects;
  fastStore: FastStore;
  durable: DurableStore;
  plugins: readonly DeliveryPlugin[];
  /** Run dispatch and the run registry, for the agent's turns on inbound messages. */
  runs: { queue: RunQueue; registry: RunRegistry };
  /** Makes each account's HTTP client; the caller closes them after stop(). */
  http: HttpClientFactory;
  logger: Logger;
  /** Names this replica as a lease holder (default: random). */
  replicaId?: string;
  /** Sends and polls by channel and outcome; none without. */
  metrics?: Metrics;
  /** How often the inbound processor looks for sessions nobody works on (default 5 s). */
  inboundScanEveryMs?: number;
}

export interface DeliveryService {
  directory: ChannelDirectory;
  outbox: Outbox;
  /** Inbound messages: the sink receivers hand their batches to, and the processor. */
  inbound: Inbound;
  stop(): Promise<void>;
}

/**
 * How long the claim of a send, or the lease of an outbox job, outlives its holder's last
 * heartbeat (holders extend them every third of it): after a crash another replica takes over
 * within this much.
 */
const CLAIM_TTL_MS = 15_000;

/**
 * The lease of one session's inbound queue: after a crash another replica (or the restarted
 * one) resumes the session within this much plus one scan.
 */
const INBOUND_LEASE_MS = 10_000;

function deliveryOutcomes(metrics: Metrics): (kind: "send" | "poll", channel: string, outcome: string) => void {
  const sends = metrics.counter({
    name: "gw_delivery_sends_total",
    help: "Sends and polls to messaging channels, by kind, channel and outcome (sent, cached, or the error code).",
    labelNames: ["kind", "channel", "outcome"] as const,
  });
  return (kind, channel, outcome) => sends.inc({ kind, channel, outcome });
}

/** Sends through the channel directory: once per idempotency key, paced, its outcomes counted. */
function makeDispatcher(
  deps: DeliveryServiceDeps,
  directory: ChannelDirectory,
  status: StatusBook,
  media: { allowHosts: string[]; allowPrivateNetworks: boolean },
): Dispatcher {
  const settings = deps.config.delivery;
  const windowMs = settings.idempotencyWindowSeconds * 1000;
  return new Dispatcher({
    directory,
    store: deps.fastStore,
    idempotency: new RunOnce<string[]>(deps.fastStore, {
      // The ids of the parts sent.
      schema: z.array(z.string()),
      windowMs,
      claimTtlMs: CLAIM_TTL_MS,
      stillRunning: () => new GatewayError("TIMEOUT", "an earlier request with this idempotencyKey is still being delivered"),
      conflict: () =>
        new GatewayError("CONFLICT", "idempotencyKey was already used for a different request; use a new key for a new message"),
    }),
    pacer: new Pacer(deps.fastStore),
    status,
    logger: deps.logger,
    maxAttempts: settings.maxAttempts,
    callTimeoutMs: settings.callTimeoutMs,
    sendTimeoutMs: settings.sendTimeoutMs,
    windowMs,
    media,
    pacing: settings.pacing,
    ...(deps.metrics ? { onOutcome: deliveryOutcomes(deps.metrics) } : {}),
  });
}

/**
 * The delivery service (DESIGN §9): `send`, `poll`, `channels.status` and the durable outbox of
 * agents' answers, served on `<prefix>.rpc.delivery.*` in the `delivery` queue group. Written
 * once against the ports; main.ts (NATS, Redis, JetStream) and the embedded gateway (in-process
 * bus, memory, files) run it.
 */
export async function startDeliveryService(deps: DeliveryServiceDeps): Promise<DeliveryService> {
  const settings = deps.config.delivery;
  const mediaPolicy = { allowHosts: settings.media.allowHosts, allowPrivateNetworks: settings.media.allowPrivateNetworks };
  const directory = ChannelDirectory.build(deps.config.channels, deps.plugins, withMediaPolicy(deps.http, mediaPolicy), {
    maxBytes: settings.media.maxBytes,
    timeoutMs: settings.media.timeoutMs,
  });
  const status = new StatusBook(deps.fastStore, deps.logger);
  const dispatcher = makeDispatcher(deps, directory, status, mediaPolicy);
  const replicaId = deps.replicaId ?? randomUUID();
  const outbox = new Outbox(
    { kv: await deps.durable.kv("delivery_outbox"), store: deps.fastStore, dispatcher, logger: deps.logger },
    { replicaId, retryForMs: settings.outboxRetryForSeconds * 1000, leaseMs: CLAIM_TTL_MS },
  );
  const reporter = new ChannelStatusReporter({ directory, status, probeCacheMs: settings.probeCacheMs });

  // Before anything is served: it checks the channels' agents and may refuse to start.
  const inbound = await startInbound({
    ...deps,
    directory,
    dispatcher,
    outbox,
    status,
    replicaId,
    leaseMs: INBOUND_LEASE_MS,
    ...(deps.inboundScanEveryMs === undefined ? {} : { scanEveryMs: deps.inboundScanEveryMs }),
  });
  const served: Unsubscribe[] = [
    serveRpc(deps.bus, deps.subjects, RPC.deliverySend, (req) => dispatcher.send(req)),
    serveRpc(deps.bus, deps.subjects, RPC.deliveryPoll, (req) => dispatcher.poll(req)),
    serveRpc(deps.bus, deps.subjects, RPC.channelsStatus, (req) => reporter.report(req.probe)),
    serveRpc(deps.bus, deps.subjects, RPC.deliveryEnqueue, async (req) => {
      const message = req.message;
      if (message === undefined) throw new GatewayError("INVALID_REQUEST", "enqueue needs a message");
      dispatcher.prepare(message);
      if (req.validateOnly) return { jobId: "", duplicate: false };
      return outbox.enqueue(message, req.origin);
    }),
  ];
  outbox.start();
  // Polling and gateway platforms: one reader per account across replicas, into the same sink.
  const receivers = await startReceivers({
    directory,
    sink: inbound.sink,
    fastStore: deps.fastStore,
    durable: deps.durable,
    logger: deps.logger,
    replicaId,
  });
  deps.logger.info(
    { channels: directory.list().map((c) => `${c.id}(${c.kind}: ${c.accounts.map((a) => a.accountId).join(",")})`) },
    "delivery serving",
  );
  return {
    directory,
    outbox,
    inbound,
    stop: async () => {
      for (const unsubscribe of served) unsubscribe();
      await receivers.stop();
      await inbound.stop();
      await outbox.stop();
      await status.settled();
    },
  };
}
