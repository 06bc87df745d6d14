import type { z } from "zod";

interface Def {
  type: string;
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  element?: z.core.$ZodType;
  valueType?: z.core.$ZodType;
  shape?: Record<string, z.core.$ZodType>;
  catchall?: z.core.$ZodType;
  options?: z.core.$ZodType[];
}

const def = (schema: z.core.$ZodType): Def => schema._zod.def as unknown as Def;

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  let current = schema;
  for (;;) {
    const d = def(current);
    const inner = d.innerType ?? (d.type === "pipe" ? d.in : undefined);
    if (!inner) return current;
    current = inner;
  }
}

/** The schema that checks the value at `path` (optional and default wrappers taken off), if one does. */
export function schemaAt(root: z.core.$ZodType, path: readonly PropertyKey[]): z.core.$ZodType | undefined {
  let schema: z.core.$ZodType | undefined = unwrap(root);
  for (const segment of path) {
    const d = def(schema);
    if (d.type === "object" && typeof segment === "string") schema = d.shape?.[segment];
    else if (d.type === "array") schema = d.element;
    else if (d.type === "record") schema = d.valueType;
    else return undefined;
    if (!schema) return undefined;
    schema = unwrap(schema);
  }
  return schema;
}

/** The keys an object schema accepts at `path`, so an unknown-key message can list them. */
export function knownKeysAt(root: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  const schema = schemaAt(root, path);
  return schema === undefined ? [] : Object.keys(def(schema).shape ?? {});
}

/** The known key closest to a typo, if it is close enough to be a likely slip. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(key.length / 3)) ? best : undefined;
}

/** Optimal-string-alignment distance: a swapped pair of letters ("prot" for "port") counts as one edit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * Every key path a schema accepts: `gateway.auth.token`, `agents.list[].id` (an array's
 * elements), `models.providers.*.kind` (a record's values, or an object's catch-all keys).
 * Union members contribute their keys under the same path. For checks that keep documentation
 * (config/gateway.example.json5) in step with the schema.
 */
export function schemaKeyPaths(root: z.core.$ZodType): string[] {
  const paths = new Set<string>();
  const walk = (schema: z.core.$ZodType, prefix: string) => {
    const current = unwrap(schema);
    const d = def(current);
    if (d.type === "object") {
      for (const [key, child] of Object.entries(d.shape ?? {})) {
        const path = prefix === "" ? key : `${prefix}.${key}`;
        paths.add(path);
        walk(child, path);
      }
      // A loose object (catch-all `unknown`) takes any key: nothing to document there.
      if (d.catchall && !["never", "unknown"].includes(def(d.catchall).type)) {
        const path = `${prefix}.*`;
        paths.add(path);
        walk(d.catchall, path);
      }
    } else if (d.type === "array" && d.element) walk(d.element, `${prefix}[]`);
    else if (d.type === "record" && d.valueType) {
      const path = `${prefix}.*`;
      paths.add(path);
      walk(d.valueType, path);
    } else if (d.type === "union") for (const option of d.options ?? []) walk(option, prefix);
  };
  walk(root, "");
  return [...paths];
}

/**
 * Whether `value` has something at `path` (as schemaKeyPaths writes it): `*` is any key of an
 * object, `[]` any element of an array; one match anywhere is enough.
 */
export function hasKeyPath(value: unknown, path: string): boolean {
  const [head, ...rest] = path.replace(/\[\]/g, ".[]").split(".").filter((part) => part !== "");
  if (head === undefined) return value !== undefined;
  const tail = rest.join(".");
  if (head === "[]") return Array.isArray(value) && value.some((element) => hasKeyPath(element, tail));
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  if (head === "*") return Object.values(record).some((child) => hasKeyPath(child, tail));
  return head in record && hasKeyPath(record[head], tail);
}
