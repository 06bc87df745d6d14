import { decoratedStream } from "./decorated-stream.js";
import type { ModelChunk, ModelProvider, ModelRequest } from "./model-provider.js";
import type { ModelCooldowns } from "./model-cooldowns.js";
import {
  afterFailure,
  type Candidate,
  type ChainEntry,
  candidates,
  classifyFailure,
  type CoolState,
  type FailureClass,
  type KeySlot,
  NO_COOLDOWNS,
  planAttempts,
  weightedOrder,
} from "./route-plan.js";

/** A cooldown read or write slower than this is given up: a model call never waits long on the store. */
const STORE_TIMEOUT_MS = 500;

/** `work`, or a rejection after `ms`; a late failure of `work` is then observed and dropped. */
function bounded<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`model cooldowns: no answer from the FastStore within ${ms} ms`)), ms);
  });
  work.catch(() => undefined);
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** A model call that failed and was passed on to the next candidate. */
export interface Fallback {
  /** `<provider>/<model>` that failed. */
  model: string;
  /** The key's id (not the key); "-" for a keyless provider. */
  key: string;
  reason: Exclude<FailureClass, "fatal">;
  status?: number;
}

/** What a run's calls went through: the model that answered last and every fallback taken. */
export interface RouteReport {
  answered: string;
  fallbacks: Fallback[];
}

/** Model calls by provider, key and outcome, and cooldowns started (key "*": the whole provider). */
export interface RouteMetrics {
  attempt(provider: string, key: string, outcome: "ok" | FailureClass | "aborted"): void;
  cooled(provider: string, key: string): void;
}

/** What the router shares across runs: the per-key adapters, the keys, whose turn it is, the cooldowns. */
export interface RouterDeps {
  deployment(provider: string, keyId: string): ModelProvider;
  keysOf(provider: string): readonly KeySlot[];
  /** `models.providers.<id>.weight`, when set (pools of deployments of one model). */
  weightOf(provider: string): number | undefined;
  /** The next round-robin position for `provider` (advances on every call). */
  turn(provider: string): number;
  cooldowns: ModelCooldowns;
  metrics?: RouteMetrics;
  /** A cooldown read or write that failed: the call goes on without it. */
  onStoreError(err: unknown): void;
}

/**
 * One run's model: its fallback chain over the providers' keys. A call tries the first candidate
 * not cooling down; a retryable failure before any chunk reached the caller cools what failed
 * and moves to the next; once a chunk was yielded a failure ends the call (no mixed answers).
 * When every candidate failed, the last failure is thrown (RetryingProvider outside may try the
 * whole chain again after its backoff).
 */
export class ModelRouter implements ModelProvider {
  readonly report: RouteReport = { answered: "", fallbacks: [] };

  constructor(
    private readonly chain: readonly ChainEntry[],
    private readonly deps: RouterDeps,
  ) {}

  /** The plan `firstChoice` read, kept for the call it announced. */
  private planned: Promise<Candidate[]> | undefined;

  /**
   * The model the next call tries first: the chain's first candidate not cooling down (its
   * first entry when all are). The plan is kept, so that call reads no cooldowns again.
   */
  async firstChoice(): Promise<string> {
    this.planned ??= this.plan();
    return (await this.planned)[0]?.ref ?? this.chain[0]!.ref;
  }

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    let current: Candidate | undefined;
    return decoratedStream({
      open: async () => {
        let left = await (this.planned ?? this.plan());
        this.planned = undefined;
        let last: unknown;
        while (left.length > 0) {
          const candidate = left.shift()!;
          try {
            const inner = this.deps.deployment(candidate.provider, candidate.key.id).stream({ ...request, model: candidate.model }, signal)[Symbol.asyncIterator]();
            const first = await inner.next();
            current = candidate;
            return { inner, first };
          } catch (err) {
            const cls = await this.failed(candidate, err, signal);
            if (cls === "aborted" || cls === "fatal") throw err;
            last = err;
            left = afterFailure(left, candidate, cls);
            if (left.length > 0) this.report.fallbacks.push(fallback(candidate, cls, err));
          }
        }
        throw last;
      },
      // Once a chunk reached the caller a failure ends the call: no fallback, no mixed answers.
      end: async (how) => {
        if (current === undefined) return;
        if (how.kind === "done") {
          this.deps.metrics?.attempt(current.provider, current.key.id, "ok");
          this.report.answered = current.ref;
        } else if (how.kind === "failed") await this.failed(current, how.error, signal);
      },
    });
  }

  /** Counts a candidate's failed call and cools what failed (unless fatal or aborted); answers its class. */
  private async failed(candidate: Candidate, err: unknown, signal: AbortSignal): Promise<FailureClass | "aborted"> {
    const cls = signal.aborted ? "aborted" : classifyFailure(err);
    this.deps.metrics?.attempt(candidate.provider, candidate.key.id, cls);
    if (cls !== "aborted" && cls !== "fatal") await this.cool(candidate, cls, err);
    return cls;
  }

  private async plan(): Promise<Candidate[]> {
    const order = weightedOrder(this.chain, (p) => this.deps.weightOf(p));
    const all = candidates(order, (p) => this.deps.keysOf(p), (p) => this.deps.turn(p));
    return planAttempts(all, await this.coolState(all));
  }

  /** A chain of one candidate has nothing to choose: no store read on its way. */
  private async coolState(all: readonly Candidate[]): Promise<CoolState> {
    if (all.length <= 1) return NO_COOLDOWNS;
    const providers = new Map<string, string[]>();
    for (const c of all) providers.set(c.provider, [...(providers.get(c.provider) ?? []), c.key.id]);
    try {
      return await bounded(this.deps.cooldowns.read(providers), STORE_TIMEOUT_MS);
    } catch (err) {
      this.deps.onStoreError(err);
      return NO_COOLDOWNS;
    }
  }

  private async cool(c: Candidate, cls: Exclude<FailureClass, "fatal">, err: unknown): Promise<void> {
    try {
      if (cls === "rate_limit") {
        const ms = await bounded(this.deps.cooldowns.rateLimited(c.provider, c.key.id, retryAfterOf(err)), STORE_TIMEOUT_MS);
        if (ms > 0) this.deps.metrics?.cooled(c.provider, c.key.id);
      } else if ((await bounded(this.deps.cooldowns.providerFailed(c.provider), STORE_TIMEOUT_MS)) > 0) {
        this.deps.metrics?.cooled(c.provider, "*");
      }
    } catch (storeErr) {
      this.deps.onStoreError(storeErr);
    }
  }
}

function retryAfterOf(err: unknown): number | undefined {
  return (err as { retryAfterMs?: number }).retryAfterMs;
}

function fallback(c: Candidate, reason: Exclude<FailureClass, "fatal">, err: unknown): Fallback {
  const status = (err as { status?: number }).status;
  return { model: c.ref, key: c.key.id, reason, ...(status === undefined ? {} : { status }) };
}
