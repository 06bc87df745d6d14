import type { z } from "zod";

interface Def {
  type: string;
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  element?: z.core.$ZodType;
  valueType?: z.core.$ZodType;
  shape?: Record<string, z.core.$ZodType>;
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

/** The keys an object schema accepts at `path`, so an unknown-key message can list them. */
export function knownKeysAt(root: z.core.$ZodType, path: readonly PropertyKey[]): string[] {
  let schema: z.core.$ZodType | undefined = unwrap(root);
  for (const segment of path) {
    const d = def(schema);
    if (d.type === "object" && typeof segment === "string") schema = d.shape?.[segment];
    else if (d.type === "array") schema = d.element;
    else if (d.type === "record") schema = d.valueType;
    else return [];
    if (!schema) return [];
    schema = unwrap(schema);
  }
  return Object.keys(def(schema).shape ?? {});
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
