/** One field of a cron expression: its name, range and, for months and weekdays, names. */
interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const SPECS: readonly FieldSpec[] = [
  { name: "second", min: 0, max: 59 },
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: MONTHS },
  // 7 is Sunday too, as in most crons.
  { name: "day of week", min: 0, max: 7, names: DAYS },
];

/** A field's allowed values, and whether it was `*` (which matters for the day fields). */
interface Field {
  values: ReadonlySet<number>;
  any: boolean;
}

function value(text: string, spec: FieldSpec): number {
  const named = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (spec.name === "month" ? 1 : 0);
  if (!/^\d{1,2}$/.test(text)) throw new Error(`${spec.name}: "${text}" is not a number${spec.names ? " or a name" : ""}`);
  const n = Number(text);
  if (n < spec.min || n > spec.max) throw new Error(`${spec.name}: ${n} is outside ${spec.min}-${spec.max}`);
  return n;
}

function parseItem(item: string, spec: FieldSpec, into: Set<number>): void {
  const [range = "", stepText, extra] = item.split("/");
  if (extra !== undefined || range === "") throw new Error(`${spec.name}: "${item}" is not a value, range or step`);
  const step = stepText === undefined ? 1 : Number(stepText);
  if (!Number.isInteger(step) || step < 1 || (stepText !== undefined && !/^\d+$/.test(stepText))) {
    throw new Error(`${spec.name}: the step in "${item}" must be a positive whole number`);
  }
  let from: number;
  let to: number;
  if (range === "*" || range === "?") [from, to] = [spec.min, spec.max];
  else if (range.includes("-")) {
    const [a = "", b = ""] = range.split("-");
    [from, to] = [value(a, spec), value(b, spec)];
    if (from > to) throw new Error(`${spec.name}: the range "${range}" runs backwards`);
  } else {
    from = value(range, spec);
    // "5/15" means from 5 to the end, every 15.
    to = stepText === undefined ? from : spec.max;
  }
  for (let n = from; n <= to; n += step) into.add(spec.name === "day of week" && n === 7 ? 0 : n);
}

function parseField(text: string, spec: FieldSpec): Field {
  const values = new Set<number>();
  for (const item of text.split(",")) parseItem(item, spec, values);
  return { values, any: text.startsWith("*") || text === "?" };
}

/**
 * A parsed cron expression and the search for its next matching wall time (local time written
 * as UTC milliseconds, see wall-clock.ts). Day of month and day of week, when both are given,
 * match either (as in Vixie cron); when one is `*`, the other decides.
 */
export class CronFields {
  private constructor(private readonly fields: readonly Field[]) {}

  static parse(expression: string): CronFields {
    const parts = expression.trim().split(/\s+/);
    if (parts.length !== 5 && parts.length !== 6) {
      throw new Error(`"${expression}" has ${parts.length} fields; a cron expression has 5 (minute hour day month weekday) or 6 (seconds first)`);
    }
    const all = parts.length === 5 ? ["0", ...parts] : parts;
    return new CronFields(all.map((text, i) => parseField(text, SPECS[i]!)));
  }

  private has(i: number, n: number): boolean {
    return this.fields[i]!.values.has(n);
  }

  private dayMatches(date: Date): boolean {
    const [dom, dow] = [this.fields[3]!, this.fields[5]!];
    const byDate = dom.values.has(date.getUTCDate());
    const byWeekday = dow.values.has(date.getUTCDay());
    if (!dom.any && !dow.any) return byDate || byWeekday;
    return byDate && byWeekday;
  }

  /** The first wall at or after `from` (a whole second) that matches, or null past `limit`. */
  nextWall(from: number, limit: number): number | null {
    let at = from;
    while (at <= limit) {
      const d = new Date(at);
      const [y, mo, day, h, mi, s] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()];
      if (!this.has(4, mo + 1)) at = Date.UTC(y, mo + 1, 1);
      else if (!this.dayMatches(d)) at = Date.UTC(y, mo, day + 1);
      else if (!this.has(2, h)) at = Date.UTC(y, mo, day, h + 1);
      else if (!this.has(1, mi)) at = Date.UTC(y, mo, day, h, mi + 1);
      else if (!this.has(0, s)) at = Date.UTC(y, mo, day, h, mi, s + 1);
      else return at;
    }
    return null;
  }
}

export const parseCronFields = (expression: string): CronFields => CronFields.parse(expression);
