/**
 * How the CLI shows things to a person: aligned tables, relative times, colour only where it
 * helps. Pure functions; the `Output` (output.ts) decides whether colour is on.
 */

// eslint-disable-next-line no-control-regex -- colour codes start with ESC; this strips them.
const ANSI = /\u001b\[[0-9;]*m/g;

/** Width of a string as the terminal shows it: colour codes take no room. */
export function visibleWidth(text: string): number {
  return [...text.replace(ANSI, "")].length;
}

function pad(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - visibleWidth(text)));
}

/**
 * Rows under a header, each column as wide as its widest cell, two spaces between columns. The
 * last column is not padded (no trailing spaces). An empty list is a line saying so.
 */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, empty = "(none)"): string {
  if (rows.length === 0) return empty;
  const widths = header.map((title, col) => Math.max(visibleWidth(title), ...rows.map((row) => visibleWidth(row[col] ?? ""))));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, col) => (col === cells.length - 1 ? cell : pad(cell, widths[col]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

const UNITS: Array<[number, string]> = [
  [86_400_000, "d"],
  [3_600_000, "h"],
  [60_000, "m"],
  [1_000, "s"],
];

/** `5s ago`, `3m ago`, `2h ago`, `4d ago`, `in 3m`; `just now` within a second; `-` for none. */
export function relativeTime(at: number | null | undefined, now = Date.now()): string {
  if (at === null || at === undefined || !Number.isFinite(at) || at <= 0) return "-";
  const delta = now - at;
  const abs = Math.abs(delta);
  if (abs < 1_000) return "just now";
  const [size, unit] = UNITS.find(([ms]) => abs >= ms)!;
  const amount = `${Math.floor(abs / size)}${unit}`;
  return delta >= 0 ? `${amount} ago` : `in ${amount}`;
}

/** Shortens one-line text to `max` characters with an ellipsis. */
export function truncate(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, Math.max(0, max - 1))}…`;
}

export type Colour = "red" | "green" | "yellow" | "dim" | "bold" | "cyan";

const CODES: Record<Colour, [number, number]> = {
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  dim: [2, 22],
  bold: [1, 22],
};

export function paint(enabled: boolean, colour: Colour, text: string): string {
  if (!enabled) return text;
  const [open, close] = CODES[colour];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

/**
 * Colour when the stream is a terminal and NO_COLOR is not set to something (no-color.org: any
 * non-empty value turns colour off).
 */
export function colourWanted(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "");
}
