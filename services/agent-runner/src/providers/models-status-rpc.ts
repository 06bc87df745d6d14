import { type Bus, type Subjects, serveRpc, type Unsubscribe } from "@gw/bus";
import { BUILTIN_PROVIDER, type GatewayConfig } from "@gw/config";
import { type ModelsStatusResponse, RPC } from "@gw/contracts";
import type { ProviderRegistry } from "./provider-registry.js";

/**
 * Every provider and key with its cooldown, read from the FastStore: the state every runner
 * routes by, so any runner answers for all of them.
 */
export async function modelsStatus(providers: ProviderRegistry, models: GatewayConfig["models"]): Promise<ModelsStatusResponse> {
  const out = await Promise.all(
    [...providers.providerKeys()].map(async ([name, keys]) => {
      const status = await providers.cooldownBook.status(
        name,
        keys.map((k) => k.id),
      );
      return {
        name,
        kind: name === BUILTIN_PROVIDER ? "builtin" : (models.providers[name]?.kind ?? ""),
        coolingMs: Math.ceil(status.coolingMs),
        failures: status.failures,
        keys: status.keys.map((k) => ({ id: k.id, coolingMs: Math.ceil(k.coolingMs), rateLimits: k.rateLimits })),
      };
    }),
  );
  return { providers: out };
}

/** Serves RPC.modelsStatus (`<prefix>.rpc.runner.models.status`) for the edge's models.status. */
export function serveModelsStatus(deps: { bus: Bus; subjects: Subjects; providers: ProviderRegistry; models: GatewayConfig["models"] }): Unsubscribe {
  return serveRpc(deps.bus, deps.subjects, RPC.modelsStatus, () => modelsStatus(deps.providers, deps.models));
}
