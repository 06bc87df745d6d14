import { readFileSync } from "node:fs";

/**
 * A value for every `${NAME}` a config file needs (references without a `:-` default), so tests
 * that run the example config keep working as it documents more secrets.
 */
export function envForConfig(path: string | URL): Record<string, string> {
  const text = readFileSync(path, "utf8");
  const names = [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!);
  return Object.fromEntries(names.map((name) => [name, `value-of-${name.toLowerCase()}`]));
}
