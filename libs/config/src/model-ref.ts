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
