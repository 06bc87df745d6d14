import { createHash } from "node:crypto";
import { BUILTIN_PROVIDER, type GatewayConfig, modelTakesImages, parseModelChain, providerKeys } from "@gw/config";
import { GatewayError } from "@gw/contracts";
import { DEFAULT_RETRY, type RetryPolicy } from "@gw/http-client";
import { createSecretScrubber } from "@gw/runtime";
import { createMemoryFastStore, type FastStore } from "@gw/store";
import { AnthropicProvider } from "./anthropic-provider.js";
import { BuiltinProvider } from "./builtin-provider.js";
import { MeteredProvider, type ModelMetrics } from "./metered-provider.js";
import type { ModelProvider } from "./model-provider.js";
import { ModelCooldowns } from "./model-cooldowns.js";
import { ModelRouter, type RouteMetrics, type RouteReport } from "./model-router.js";
import { OpenAiProvider } from "./openai-provider.js";
import { RetryingProvider } from "./retrying-provider.js";
import type { ChainEntry, KeySlot } from "./route-plan.js";
import { SecretRedactingProvider } from "./secret-redacting-provider.js";
import { TracedProvider } from "./traced-provider.js";

const DEFAULT_TIMEOUT_MS = 60_000;
/** The one key slot of a provider without a key (builtin, a local server). */
const KEYLESS = "-";

export interface ProviderRegistryOptions {
  retry?: RetryPolicy;
  /** Configured secret values (collectSecrets), kept out of provider error messages. */
  secrets?: readonly string[];
  /** Model-call latency and tokens by provider; unmetered without. */
  metrics?: ModelMetrics;
  /** Calls and cooldowns by provider and key; uncounted without. */
  routeMetrics?: RouteMetrics;
  /** Where cooldowns live (shared by every runner); a private memory store without. */
  fastStore?: FastStore;
  /** A cooldown read or write failed (the call went on without it). */
  onStoreError?: (err: unknown) => void;
}

/** A key's id in the FastStore, metrics and models.status: a short hash, never the key. */
export function keyId(key: string | undefined): string {
  return key === undefined ? KEYLESS : createHash("sha256").update(key).digest("hex").slice(0, 8);
}

/** What `resolve` hands a run: its model (the chain's router) and the first model's name. */
export interface ResolvedModel {
  provider: ModelProvider;
  model: string;
  /** The model that answered and the fallbacks taken, filled in as the run calls. */
  route: RouteReport;
  /** `<provider>/<model>` the first call tries (the chain's first not cooling down). */
  firstChoice(): Promise<string>;
}

/**
 * Resolves a model reference or fallback chain (`a/x,b/y`) to a provider built from
 * `models.providers`: one adapter per provider and API key, built once, and per run a router
 * over the chain. The decorators, from the outside in:
 * - SecretRedacting: the final message (with RetryingProvider's "after N attempts") is scrubbed.
 * - Retrying: only when the whole chain failed does a run wait and try it again.
 * - ModelRouter: per call, the first provider and key not cooling down, the next on a failure.
 * - Traced, Metered (per provider and key): a span and a duration per call that went out.
 */
export class ProviderRegistry {
  private readonly deployments = new Map<string, ModelProvider>();
  private readonly keys = new Map<string, KeySlot[]>();
  private readonly turns = new Map<string, number>();
  private readonly cooldowns: ModelCooldowns;
  private readonly scrub: (text: string) => string;

  constructor(
    private readonly models: GatewayConfig["models"],
    private readonly opts: ProviderRegistryOptions = {},
  ) {
    this.cooldowns = new ModelCooldowns(opts.fastStore ?? createMemoryFastStore());
    this.scrub = createSecretScrubber(opts.secrets ?? []);
    this.add(BUILTIN_PROVIDER, [undefined], () => new BuiltinProvider());
    for (const [name, p] of Object.entries(this.models.providers)) {
      const timeoutMs = p.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      this.add(name, providerKeys(p), (apiKey) => {
        const config = { name, baseUrl: p.baseUrl, apiKey, timeoutMs, secrets: opts.secrets };
        return p.kind === "openai" ? new OpenAiProvider(config) : new AnthropicProvider(config);
      });
    }
  }

  private add(name: string, keys: Array<string | undefined>, adapter: (key: string | undefined) => ModelProvider): void {
    const slots: KeySlot[] = [];
    for (const key of keys) {
      const id = keyId(key);
      if (slots.some((slot) => slot.id === id)) continue;
      slots.push({ id });
      // Traced outermost: a call's span covers what the run waited for it.
      const inner = adapter(key);
      const metered = this.opts.metrics === undefined ? inner : new MeteredProvider(inner, name, this.opts.metrics, id);
      this.deployments.set(`${name} ${id}`, new TracedProvider(metered, name));
    }
    this.keys.set(name, slots);
  }

  /** The configured providers and their key ids, for models.status. */
  providerKeys(): ReadonlyMap<string, readonly KeySlot[]> {
    return this.keys;
  }

  get cooldownBook(): ModelCooldowns {
    return this.cooldowns;
  }

  resolve(ref: string): ResolvedModel {
    const chain = this.chainOf(ref);
    const router = new ModelRouter(chain, {
      deployment: (provider, id) => this.deployments.get(`${provider} ${id}`)!,
      keysOf: (provider) => this.keys.get(provider) ?? [],
      weightOf: (provider) => this.models.providers[provider]?.weight,
      turn: (provider) => {
        const turn = this.turns.get(provider) ?? 0;
        this.turns.set(provider, (turn + 1) % Number.MAX_SAFE_INTEGER);
        return turn;
      },
      cooldowns: this.cooldowns,
      ...(this.opts.routeMetrics ? { metrics: this.opts.routeMetrics } : {}),
      onStoreError: this.opts.onStoreError ?? (() => undefined),
    });
    const retrying = new RetryingProvider(router, this.opts.retry ?? DEFAULT_RETRY);
    return { provider: new SecretRedactingProvider(retrying, this.scrub), model: chain[0]!.model, route: router.report, firstChoice: () => router.firstChoice() };
  }

  /** The first model of a chain that reads no images (models.providers.<id>.input), or undefined. */
  textOnlyModel(ref: string): string | undefined {
    return this.chainOf(ref).find((entry) => !modelTakesImages(this.models.providers, entry))?.ref;
  }

  private chainOf(ref: string): ChainEntry[] {
    let refs: ReturnType<typeof parseModelChain>;
    try {
      refs = parseModelChain(ref);
    } catch (cause) {
      throw new GatewayError("INVALID_REQUEST", (cause as Error).message);
    }
    return refs.map(({ provider, model }) => {
      if (!this.keys.has(provider)) throw new GatewayError("INVALID_REQUEST", `unknown model provider: ${provider}`);
      if (provider === BUILTIN_PROVIDER && model !== "echo") throw new GatewayError("INVALID_REQUEST", `unknown builtin model: ${model}`);
      return { ref: `${provider}/${model}`, provider, model };
    });
  }
}
