import { type Bus, serveRpc, type Subjects, type Unsubscribe } from "@gw/bus";
import { bindingWarnings, type GatewayConfig, textOnlyModelOf } from "@gw/config";
import { given, type PairingRequest, RPC } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { RunQueue, RunRegistry } from "@gw/runs";
import type { DurableStore, FastStore } from "@gw/store";
import { type ChannelDirectory, checkChannelAgents } from "../channel-directory.js";
import type { Dispatcher } from "../outbound/dispatcher.js";
import type { Outbox } from "../outbound/outbox.js";
import type { StatusBook } from "../status-book.js";
import { AgentTurns } from "./turn/agent-turns.js";
import { AnsweredEvents } from "./store/answered-events.js";
import { DurableInboundSink } from "./store/durable-sink.js";
import { InboundMedia } from "./store/inbound-media.js";
import { InboundProcessor } from "./turn/inbound-processor.js";
import { InboundStore } from "./store/inbound-store.js";
import { InboundTurn } from "./turn/inbound-turn.js";
import { QueueArrivals } from "./turn/queue-arrivals.js";
import { type PairingEntry, PairingBook } from "./pairing/sender-approval-book.js";
import type { InboundSink } from "./store/sink.js";
import { WebhookRouter } from "./receive/webhook-router.js";

export interface InboundDeps {
  config: GatewayConfig;
  bus: Bus;
  subjects: Subjects;
  fastStore: FastStore;
  durable: DurableStore;
  runs: { queue: RunQueue; registry: RunRegistry };
  directory: ChannelDirectory;
  dispatcher: Dispatcher;
  outbox: Outbox;
  status: StatusBook;
  logger: Logger;
  replicaId: string;
  /** Lease of a session's queue (and of the outbox's jobs): a dead holder's work resumes after it. */
  leaseMs: number;
  /** How often every replica looks for sessions nobody works on; default 5 s. */
  scanEveryMs?: number;
}

export interface Inbound {
  /** Where receivers (pollers, gateway connections) hand their messages. */
  sink: InboundSink;
  processor: InboundProcessor;
  stop(): Promise<void>;
}

/** A waiting sessions' messages beyond this make the platform retry later (503). */
const MAX_PER_SESSION = 200;

function pairingView(entry: PairingEntry): PairingRequest {
  return {
    channel: entry.channel,
    accountId: entry.accountId,
    sender: entry.sender,
    senderName: entry.senderName,
    code: entry.code,
    requestedAt: entry.requestedAt,
    expiresAt: entry.expiresAt,
  };
}

/**
 * Delivery's inbound side: the webhook route (`inbound.handle`), the durable store and its sink,
 * the processor that answers stored messages, and sender pairing (`channels.pairing.*`).
 */
export async function startInbound(deps: InboundDeps): Promise<Inbound> {
  checkChannelAgents(deps.directory, deps.config);
  // What `gateway config check` warns about, in the log too: the file is accepted, but a binding answers less than it may seem.
  for (const { path, message } of bindingWarnings(deps.config.bindings)) deps.logger.warn({ path }, `routing binding: ${message}`);
  const settings = deps.config.delivery;
  const windowMs = settings.idempotencyWindowSeconds * 1000;
  const store = new InboundStore(await deps.durable.kv("delivery_inbound"), { maxPerSession: MAX_PER_SESSION });
  const pairing = new PairingBook({
    requests: await deps.durable.kv("delivery_pairing"),
    approved: await deps.durable.kv("delivery_senders"),
    ttlMs: settings.inbound.pairingTtlSeconds * 1000,
  });
  const answered = new AnsweredEvents(deps.fastStore, windowMs);
  const turns = new AgentTurns({
    bus: deps.bus,
    subjects: deps.subjects,
    ...deps.runs,
    logger: deps.logger,
    starterId: `delivery-${deps.replicaId}`,
    defaultTimeoutSeconds: deps.config.runner.defaultTimeoutSeconds,
  });
  const replies = { failureReply: settings.inbound.failureReply, timeoutReply: settings.inbound.timeoutReply };
  const media = new InboundMedia({
    kv: await deps.durable.kv("delivery_media"),
    maxBytes: settings.inbound.maxMediaBytes,
    textOnlyModel: (agentId) => textOnlyModelOf(deps.config, agentId),
  });
  const turn = new InboundTurn({ ...deps, bindings: deps.config.bindings, defaultAgent: deps.config.agents.default, answered, pairing, turns, replies, media });
  const processor = new InboundProcessor(
    { store, answered, turn, fastStore: deps.fastStore, status: deps.status, logger: deps.logger },
    {
      replicaId: deps.replicaId,
      leaseMs: deps.leaseMs,
      retryForMs: settings.outboxRetryForSeconds * 1000,
      ...(deps.scanEveryMs === undefined ? {} : { scanEveryMs: deps.scanEveryMs }),
    },
  );
  const arrivals = new QueueArrivals({ ...deps, store, registry: deps.runs.registry, queueOf: (queue, msg) => turn.queueOf(queue, msg) });
  const sink = new DurableInboundSink({ ...deps, store, answered, kick: (key) => processor.kick(key), arrived: (key, origin, msg) => arrivals.arrived(key, origin, msg) });
  const router = new WebhookRouter({ ...deps, sink });

  const served: Unsubscribe[] = [
    serveRpc(deps.bus, deps.subjects, RPC.inboundHandle, (req) => router.handle(req)),
    serveRpc(deps.bus, deps.subjects, RPC.channelsPairingList, async (req) => ({
      requests: (await pairing.list(given(req.channel))).map(pairingView),
    })),
    serveRpc(deps.bus, deps.subjects, RPC.channelsPairingApprove, async (req) => {
      const entry = await pairing.approve(req.channel, req.code, given(req.accountId));
      await notifyApproved(deps, entry);
      return { approved: pairingView(entry) };
    }),
    serveRpc(deps.bus, deps.subjects, RPC.channelsPairingReject, async (req) => ({
      rejected: pairingView(await pairing.reject(req.channel, req.code, given(req.accountId))),
    })),
  ];
  turns.start();
  processor.start();
  return {
    sink,
    processor,
    stop: async () => {
      for (const unsubscribe of served) unsubscribe();
      await processor.stop();
      turns.stop();
    },
  };
}

/** Tells the approved sender, where the code went; best effort (the approval stands either way). */
async function notifyApproved(deps: InboundDeps, entry: PairingEntry): Promise<void> {
  try {
    await deps.dispatcher.send({
      channel: entry.channel,
      accountId: entry.accountId,
      to: entry.chat,
      text: "You are approved: the agent answers your messages from now on.",
      mediaUrls: [],
      gifPlayback: false,
      threadId: entry.threadId,
      idempotencyKey: `pair:${entry.channel}:${entry.accountId}:${entry.sender}:${entry.code}`,
    });
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, channel: entry.channel }, "cannot tell an approved sender");
  }
}
