import { type BackoffPolicy, retryDelay } from "@gw/runtime";
import { ProviderError } from "./model-provider.js";

/**
 * The model router's decisions, without I/O: which provider, model and key a call tries in what
 * order, what a failure says about them, and how long each cools down. model-router.ts does the
 * calls and the FastStore reads and writes around these.
 */

/** One configured API key of a provider, by a stable id that is not the key ("-": keyless). */
export interface KeySlot {
  id: string;
}

/** One step of a fallback chain: `<provider>/<model>`. */
export interface ChainEntry {
  ref: string;
  provider: string;
  model: string;
}

/** One thing a call can try: a chain entry with one of its provider's keys. */
export interface Candidate extends ChainEntry {
  /** The entry's position in the chain: a failure that is the provider's skips its other keys. */
  entry: number;
  key: KeySlot;
}

/**
 * What a failure says. rate_limit: this key is over its quota (429). server: the provider
 * failed (5xx, its overload errors). timeout: no answer in time, or the connection or the stream
 * broke. fatal: the request itself is wrong or was aborted; no other model would do better.
 */
export type FailureClass = "rate_limit" | "server" | "timeout" | "fatal";

export function classifyFailure(err: unknown): FailureClass {
  if (!(err instanceof ProviderError) || !err.retryable) return "fatal";
  if (err.status === 429) return "rate_limit";
  if (err.status !== undefined && err.status >= 500) return "server";
  return "timeout";
}

/** Milliseconds of cooldown left: per provider, and per `provider key-id` (0 or absent: ready). */
export interface CoolState {
  providers: ReadonlyMap<string, number>;
  keys: ReadonlyMap<string, number>;
}

export const NO_COOLDOWNS: CoolState = { providers: new Map(), keys: new Map() };

export const keyName = (provider: string, keyId: string) => `${provider} ${keyId}`;

function coolingFor(cool: CoolState, c: Candidate): number {
  return Math.max(cool.providers.get(c.provider) ?? 0, cool.keys.get(keyName(c.provider, c.key.id)) ?? 0);
}

/**
 * The chain with each pool shuffled by weight: a pool is a run of neighbouring entries that
 * serve one model name from providers that all have a weight (deployments of one model). Each
 * pool's order is drawn anew per call, an entry first with a probability proportional to its
 * weight (the Efraimidis-Spirakis draw: sort by u^(1/w), u uniform in [0,1)).
 */
export function weightedOrder(chain: readonly ChainEntry[], weightOf: (provider: string) => number | undefined, random: () => number = Math.random): ChainEntry[] {
  const out: ChainEntry[] = [];
  for (let i = 0; i < chain.length; ) {
    let end = i + 1;
    const pooled = (e: ChainEntry) => e.model === chain[i]!.model && weightOf(e.provider) !== undefined;
    if (pooled(chain[i]!)) while (end < chain.length && pooled(chain[end]!)) end++;
    const pool = chain.slice(i, end).map((entry) => ({ entry, key: random() ** (1 / weightOf(entry.provider)!) }));
    if (pool.length > 1) pool.sort((a, b) => b.key - a.key);
    out.push(...pool.map((p) => p.entry));
    i = end;
  }
  return out;
}

/**
 * Every candidate in order: the chain's entries in turn, each provider's keys starting at its
 * turn (`turnOf`, a round-robin counter), so calls spread over the keys.
 */
export function candidates(chain: readonly ChainEntry[], keysOf: (provider: string) => readonly KeySlot[], turnOf: (provider: string) => number): Candidate[] {
  return chain.flatMap((entry, i) => {
    const keys = keysOf(entry.provider);
    const start = keys.length === 0 ? 0 : turnOf(entry.provider) % keys.length;
    return keys.map((_, k) => ({ ...entry, entry: i, key: keys[(start + k) % keys.length]! }));
  });
}

/**
 * What a call tries, in order: the candidates not cooling down. When every one is cooling the
 * call still tries the one ready soonest, alone: a run is never refused without a model call
 * (a single model with a single key behaves as it did before cooldowns existed).
 */
export function planAttempts(all: readonly Candidate[], cool: CoolState): Candidate[] {
  const ready = all.filter((c) => coolingFor(cool, c) <= 0);
  if (ready.length > 0 || all.length === 0) return ready;
  const soonest = all.reduce((best, c) => (coolingFor(cool, c) < coolingFor(cool, best) ? c : best));
  return [soonest];
}

/**
 * The attempts left after `failed` failed as `cls` (not fatal): after a 429 the next key or
 * model; after a provider failure not the same entry's other keys (the provider, not the key,
 * failed), but the next entry even on the same provider (another model may be served).
 */
export function afterFailure(left: readonly Candidate[], failed: Candidate, cls: FailureClass): Candidate[] {
  if (cls === "rate_limit") return [...left];
  return left.filter((c) => c.entry !== failed.entry);
}

/** A 429's cooldown when it gave no Retry-After: 1 s, doubled per 429 in a row, at most a minute. */
export const RATE_LIMIT_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 60_000, jitter: "none" };
/** A Retry-After longer than this is taken as this (a wrong header must not bench a key for a day). */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;
/** How long a key's 429 streak is remembered. */
export const RATE_LIMIT_STREAK_MS = 10 * 60_000;

/** The cooldown of a key after its `streak`-th 429 in a row (1 for the first). */
export function rateLimitCooldownMs(retryAfterMs: number | undefined, streak: number): number {
  if (retryAfterMs !== undefined) return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, retryAfterMs));
  return retryDelay(streak - 1, RATE_LIMIT_BACKOFF);
}

/** Provider failures (5xx, timeouts) within this window that cool the whole provider. */
export const PROVIDER_FAILURES_TO_COOL = 3;
export const PROVIDER_FAILURE_WINDOW_MS = 60_000;
/** The provider's cooldown: 5 s at the threshold, doubled per further failure, at most a minute. */
export const PROVIDER_BACKOFF: BackoffPolicy = { baseMs: 5_000, capMs: 60_000, jitter: "none" };

/** The provider's cooldown after its `failures`-th failure in the window (0: not yet). */
export function providerCooldownMs(failures: number): number {
  if (failures < PROVIDER_FAILURES_TO_COOL) return 0;
  return retryDelay(failures - PROVIDER_FAILURES_TO_COOL, PROVIDER_BACKOFF);
}
