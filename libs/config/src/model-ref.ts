export interface ModelRef {
  provider: string;
  model: string;
}

/** Provider keys, agent ids and channel ids share one spelling so they can appear in subjects and keys. */
export const LOWER_ID = /^[a-z0-9][a-z0-9_-]*$/;

/** The split of `<provider>/<model>`, or undefined when `ref` is not one. */
export function splitModelRef(ref: string): ModelRef | undefined {
  const slash = ref.indexOf("/");
  if (slash <= 0 || slash === ref.length - 1) return undefined;
  const provider = ref.slice(0, slash);
  // The model part may itself contain slashes (e.g. "openrouter/meta-llama/llama-3"), so split once.
  const model = ref.slice(slash + 1);
  if (!LOWER_ID.test(provider) || model.trim() !== model) return undefined;
  return { provider, model };
}

export function parseModelRef(ref: string): ModelRef {
  const parsed = splitModelRef(ref);
  if (!parsed) throw new Error(`invalid model reference "${ref}": expected "<provider>/<model>"`);
  return parsed;
}

/**
 * A fallback chain's one-string form: its references joined by ",". Config lists, session
 * settings and run requests all carry a chain as this string, so a single reference (a chain of
 * one) reads and travels exactly as before. Model names never hold a comma.
 */
export const MODEL_CHAIN_SEPARATOR = ",";

/** The references of a chain in order, or undefined when any part is not `<provider>/<model>`. */
export function splitModelChain(chain: string): ModelRef[] | undefined {
  const refs = chain.split(MODEL_CHAIN_SEPARATOR).map(splitModelRef);
  return refs.every((ref) => ref !== undefined) ? refs : undefined;
}

export function parseModelChain(chain: string): ModelRef[] {
  const refs = splitModelChain(chain);
  if (!refs) throw new Error(`invalid model reference "${chain}": expected "<provider>/<model>" `);
  return refs;
}

/** A config or request value (one reference or an ordered list) in its one-string form. */
export function modelChainText(model: string | readonly string[]): string {
  return typeof model === "string" ? model : model.join(MODEL_CHAIN_SEPARATOR);
}
