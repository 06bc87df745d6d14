import { MAX_IMAGE_BYTES } from "@gw/contracts";
import { z } from "zod";

const positiveInt = z.int().positive();

const mediaSchema = () => z
  .strictObject({
    // Largest attachment delivery downloads for a bridge that needs the bytes (Signal, iMessage).
    maxBytes: positiveInt.default(26_214_400),
    timeoutMs: positiveInt.default(20_000),
    // Media URLs must be public unless their host is listed here (SSRF guard).
    allowHosts: z.array(z.string().min(1)).default([]),
    allowPrivateNetworks: z.boolean().default(false),
  })
  .prefault({});

const inboundSchema = () => z
  .strictObject({
    // Largest platform webhook body the edge forwards to delivery; it travels in one bus
    // message, so it stays under NATS's default 1 MiB payload.
    maxBodyBytes: positiveInt.max(786_432).default(262_144),
    // How long the edge waits for delivery to verify, store and answer a webhook; after it the
    // platform gets a 503 and sends the event again.
    timeoutMs: positiveInt.default(10_000),
    // How long a pairing code sent to an unknown sender can be approved.
    pairingTtlSeconds: positiveInt.default(3_600),
    // What the person is told when the agent's run for their message fails (model error, runner
    // lost) or runs out of time; "" sends nothing. The failure is logged and in channels.status.
    failureReply: z.string().max(1_000).default("Sorry, something went wrong and I could not answer that. Please try again in a moment."),
    timeoutReply: z.string().max(1_000).default("Sorry, that took too long and I had to stop. Please try again, perhaps with a shorter request."),
    // Largest photo a person sends that delivery downloads for the agent (it travels with the
    // run and is stored with the session's message, so at most the images' limit per message).
    maxMediaBytes: positiveInt.max(MAX_IMAGE_BYTES).default(MAX_IMAGE_BYTES),
  })
  .prefault({});

/** The delivery service: idempotency, retries, pacing, the durable outbox, inbound messages. */
export const deliverySectionSchema = () => z
  .strictObject({
    // A repeated idempotencyKey within this window answers the first result (SPEC §8).
    idempotencyWindowSeconds: positiveInt.default(86_400),
    // How long one send or poll may take, waiting its turn behind rate limits and retrying
    // 429s, 5xx and timeouts, before it fails with DELIVERY_FAILED.
    sendTimeoutMs: positiveInt.default(120_000),
    // Platform calls per part of a send (the first try and its retries).
    maxAttempts: positiveInt.max(20).default(5),
    // Deadline of one platform HTTP call.
    callTimeoutMs: positiveInt.default(15_000),
    // Agent answers waiting in the durable outbox are retried for this long, then dropped
    // with an error logged and recorded in channels.status.
    outboxRetryForSeconds: positiveInt.default(3_600),
    // channels.status answers from a probe at most this old unless asked to probe now.
    probeCacheMs: positiveInt.default(30_000),
    // "platform": pace every call by the platform's published limits (docs/decisions.md,
    // Delivery). "off": only the platforms' own 429 cooldowns, for accounts with raised limits
    // or a benchmark against a local fake.
    pacing: z.enum(["platform", "off"]).default("platform"),
    media: mediaSchema(),
    inbound: inboundSchema(),
  })
  .prefault({});
