import type { FastStore } from "@gw/store";
import {
  type CoolState,
  keyName,
  PROVIDER_FAILURE_WINDOW_MS,
  providerCooldownMs,
  RATE_LIMIT_STREAK_MS,
  rateLimitCooldownMs,
} from "./route-plan.js";

export interface ProviderCoolStatus {
  coolingMs: number;
  failures: number;
  keys: Array<{ id: string; coolingMs: number; rateLimits: number }>;
}

/**
 * Cooldowns in the FastStore, so every runner sees a cooling provider or key at once (Redis in
 * distributed mode, memory in embedded mode). A cooldown is a value holding the time it ends,
 * expiring then; one provider's keys share a hash tag, so one getMany reads them on a Redis
 * Cluster. The 429 streak and the provider's failure count are window counters.
 */
export class ModelCooldowns {
  constructor(
    private readonly store: FastStore,
    private readonly now: () => number = Date.now,
  ) {}

  private static cool(provider: string, keyId?: string): string {
    return keyId === undefined ? `model:{${provider}}:cool` : `model:{${provider}}:cool:${keyId}`;
  }

  /** The cooldowns left of `providers` and their keys, one round trip per provider. */
  async read(providers: ReadonlyMap<string, readonly string[]>): Promise<CoolState> {
    const out = { providers: new Map<string, number>(), keys: new Map<string, number>() };
    const now = this.now();
    const left = (value: string | null) => (value === null ? 0 : Math.max(0, Number(value) - now));
    await Promise.all(
      [...providers].map(async ([provider, keyIds]) => {
        const [own, ...keys] = await this.store.values.getMany([
          ModelCooldowns.cool(provider),
          ...keyIds.map((id) => ModelCooldowns.cool(provider, id)),
        ]);
        out.providers.set(provider, left(own ?? null));
        keyIds.forEach((id, i) => out.keys.set(keyName(provider, id), left(keys[i] ?? null)));
      }),
    );
    return out;
  }

  /** One provider's state for models.status: cooldowns left, its failure count and each key's 429 streak. */
  async status(provider: string, keyIds: readonly string[]): Promise<ProviderCoolStatus> {
    const [cool, failures, ...streaks] = await Promise.all([
      this.read(new Map([[provider, keyIds]])),
      this.store.counters.peek(`model:{${provider}}:fail`),
      ...keyIds.map((id) => this.store.counters.peek(`model:{${provider}}:429:${id}`)),
    ]);
    return {
      coolingMs: cool.providers.get(provider) ?? 0,
      failures: failures.count,
      keys: keyIds.map((id, i) => ({ id, coolingMs: cool.keys.get(keyName(provider, id)) ?? 0, rateLimits: streaks[i]?.count ?? 0 })),
    };
  }

  /** A 429 on `keyId`: cools that key for its Retry-After, else exponentially by its streak. Returns the ms. */
  async rateLimited(provider: string, keyId: string, retryAfterMs: number | undefined): Promise<number> {
    const streak = await this.store.counters.hit(`model:{${provider}}:429:${keyId}`, RATE_LIMIT_STREAK_MS);
    const ms = rateLimitCooldownMs(retryAfterMs, streak.count);
    if (ms > 0) await this.store.values.set(ModelCooldowns.cool(provider, keyId), String(this.now() + ms), { ttlMs: ms });
    return ms;
  }

  /** A 5xx or timeout: counted, and once repeated the whole provider cools. Returns the ms (0: not cooled). */
  async providerFailed(provider: string): Promise<number> {
    const failures = await this.store.counters.hit(`model:{${provider}}:fail`, PROVIDER_FAILURE_WINDOW_MS);
    const ms = providerCooldownMs(failures.count);
    if (ms > 0) await this.store.values.set(ModelCooldowns.cool(provider), String(this.now() + ms), { ttlMs: ms });
    return ms;
  }
}
