import { z } from "zod";

const positiveInt = z.int().positive();

const HttpFetchToolSchema = z
  .strictObject({
    // Private, loopback and link-local addresses are refused unless listed here (SSRF).
    allowHosts: z.array(z.string().min(1)).default([]),
    allowPrivateNetworks: z.boolean().default(false),
    maxBytes: positiveInt.default(1_048_576),
    timeoutMs: positiveInt.default(10_000),
  })
  .prefault({});

/** The agent runner: capacity, run limits, retention, and built-in tool settings. */
export const RunnerSectionSchema = z
  .strictObject({
    // Runs one runner process executes at once; it pulls no more work than this.
    maxConcurrentRuns: positiveInt.default(64),
    defaultTimeoutSeconds: positiveInt.default(600),
    maxTimeoutSeconds: positiveInt.default(3600),
    // How long a finished run's result stays readable by agent.wait.
    resultRetentionSeconds: positiveInt.default(600),
    // Model calls per run (each tool round trip is one more).
    maxToolRounds: positiveInt.default(8),
    // Session entries replayed into a model call (the newest ones; compaction keeps older
    // context as a summary), so a run's cost does not grow with the session's length.
    historyLimit: positiveInt.max(10_000).default(400),
    tools: z.strictObject({ httpFetch: HttpFetchToolSchema }).prefault({}),
  })
  .prefault({});
