import { z } from "zod";

const positiveInt = z.int().positive();

const HttpFetchToolSchema = z
  .strictObject({
    // Private, loopback and link-local addresses are refused unless listed here (SSRF).
    allowHosts: z.array(z.string().min(1)).default([]),
    allowPrivateNetworks: z.boolean().default(false),
    // Bytes downloaded at most; the result the model reads is then cut to maxToolResultBytes.
    maxBytes: positiveInt.default(262_144),
    timeoutMs: positiveInt.default(10_000),
  })
  .prefault({});

/** The agent runner: capacity, run limits, retention, and built-in tool settings. */
export const RunnerSectionSchema = z
  .strictObject({
    // Runs one runner process executes at once; it pulls no more work than this. A run mostly
    // waits on its model, so one process holds many: 100 runners x 256 = 25,600 runs in flight.
    maxConcurrentRuns: positiveInt.default(256),
    // Most JSON a tool's result may take; a longer `content` is cut (and marked truncated) so the
    // result fits in one NATS message (max_payload, 1 MiB by default) with its envelope.
    maxToolResultBytes: positiveInt.max(786_432).default(262_144),
    defaultTimeoutSeconds: positiveInt.default(600),
    maxTimeoutSeconds: positiveInt.default(3600),
    // How long a finished run's result stays readable by agent.wait.
    resultRetentionSeconds: positiveInt.default(600),
    // How long, and up to how many bytes in all, runs' agent events are kept so a client that
    // reconnects (to any edge) gets what it missed (agent.subscribe with afterSeq); the oldest go first.
    eventRetentionSeconds: positiveInt.default(600),
    eventRetentionMaxBytes: positiveInt.default(268_435_456),
    // Model calls per run (each tool round trip is one more).
    maxToolRounds: positiveInt.default(8),
    // Session entries replayed into a model call (the newest ones; compaction keeps older
    // context as a summary), so a run's cost does not grow with the session's length.
    historyLimit: positiveInt.max(10_000).default(400),
    tools: z.strictObject({ httpFetch: HttpFetchToolSchema }).prefault({}),
  })
  .prefault({});
