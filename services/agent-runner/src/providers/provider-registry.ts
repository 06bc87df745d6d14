import { BUILTIN_PROVIDER, type GatewayConfig, parseModelRef } from "@gw/config";
import { GatewayError } from "@gw/contracts";
import { DEFAULT_RETRY, type RetryPolicy } from "@gw/http-client";
import { createSecretScrubber } from "@gw/runtime";
import { AnthropicProvider } from "./anthropic-provider.js";
import { BuiltinProvider } from "./builtin-provider.js";
import { MeteredProvider, type ModelMetrics } from "./metered-provider.js";
import type { ModelProvider } from "./model-provider.js";
import { OpenAiProvider } from "./openai-provider.js";
import { RetryingProvider } from "./retrying-provider.js";
import { SecretRedactingProvider } from "./secret-redacting-provider.js";
import { TracedProvider } from "./traced-provider.js";

const DEFAULT_TIMEOUT_MS = 60_000;

export interface ProviderRegistryOptions {
  retry?: RetryPolicy;
  /** Configured secret values (collectSecrets), kept out of provider error messages. */
  secrets?: readonly string[];
  /** Model-call latency and tokens by provider; unmetered without. */
  metrics?: ModelMetrics;
}

/** Resolves `<provider>/<model>` to an adapter built once from `models.providers`. */
export class ProviderRegistry {
  private readonly providers = new Map<string, ModelProvider>();

  constructor(models: GatewayConfig["models"], opts: ProviderRegistryOptions = {}) {
    // Traced outermost of all: a call's span covers what the run waited.
    const metered = (name: string, provider: ModelProvider) =>
      new TracedProvider(opts.metrics === undefined ? provider : new MeteredProvider(provider, name, opts.metrics), name);
    this.providers.set(BUILTIN_PROVIDER, metered(BUILTIN_PROVIDER, new BuiltinProvider()));
    const scrub = createSecretScrubber(opts.secrets ?? []);
    for (const [name, p] of Object.entries(models.providers)) {
      const config = { name, baseUrl: p.baseUrl, apiKey: p.apiKey, timeoutMs: p.timeoutMs ?? DEFAULT_TIMEOUT_MS, secrets: opts.secrets };
      const adapter = p.kind === "openai" ? new OpenAiProvider(config) : new AnthropicProvider(config);
      // Redaction outside retries, so the final message (with its "after N attempts") is the one
      // scrubbed; metering outermost, so a call's time is what the run waited, retries included.
      const redacted = new SecretRedactingProvider(new RetryingProvider(adapter, opts.retry ?? DEFAULT_RETRY), scrub);
      this.providers.set(name, metered(name, redacted));
    }
  }

  resolve(ref: string): { provider: ModelProvider; model: string } {
    let parsed: ReturnType<typeof parseModelRef>;
    try {
      parsed = parseModelRef(ref);
    } catch (cause) {
      throw new GatewayError("INVALID_REQUEST", (cause as Error).message);
    }
    const provider = this.providers.get(parsed.provider);
    if (provider === undefined) throw new GatewayError("INVALID_REQUEST", `unknown model provider: ${parsed.provider}`);
    if (parsed.provider === BUILTIN_PROVIDER && parsed.model !== "echo")
      throw new GatewayError("INVALID_REQUEST", `unknown builtin model: ${parsed.model}`);
    return { provider, model: parsed.model };
  }
}
