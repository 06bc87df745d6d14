/**
 * A code fence longer than the limit cannot stay whole, so it becomes several fences, each
 * closed and reopened with the original opening line (info string included): every part is
 * then valid markdown that renders as code. The result is a "virtual" text: the original plus
 * the inserted fence lines, whose positions are reported so tests can take them out again.
 */
import { closesFence, type Fence } from "./fences.js";
import { isBreakingSpace, safeCut, type Span } from "./text-units.js";

export interface VirtualText {
  text: string;
  /** Fences that fit in one part: no cut falls inside them. */
  fences: Span[];
  /** Inserted text (closing + reopening lines), in order. */
  synthetic: Span[];
}

export function splitLongFences(text: string, fences: readonly Fence[], limit: number): VirtualText {
  const out: string[] = [];
  const kept: Span[] = [];
  const synthetic: Span[] = [];
  let length = 0;
  const append = (piece: string, inserted = false): number => {
    const at = length;
    out.push(piece);
    length += piece.length;
    if (inserted && piece.length > 0) synthetic.push({ start: at, end: length });
    return at;
  };
  let copied = 0;
  for (const fence of fences) {
    append(text.slice(copied, fence.start));
    copied = fence.end;
    const head = text.slice(fence.start, fence.bodyStart);
    const tail = text.slice(fence.bodyEnd, fence.end);
    const close = `\n${fence.closeMarker}`;
    const room = limit - head.length - Math.max(close.length, tail.length);
    if (fence.end - fence.start <= limit || room < 2) {
      // It fits, or the limit cannot even hold the fence lines: then it is split like prose.
      const at = append(text.slice(fence.start, fence.end));
      if (fence.end - fence.start <= limit) kept.push({ start: at, end: length });
      continue;
    }
    const body = text.slice(fence.bodyStart, fence.bodyEnd);
    const slices = sliceBody(body, room, fence.closeMarker);
    slices.forEach(([from, to], index) => {
      const start = index === 0 ? append(head) : append(head, true);
      append(body.slice(from, to));
      if (index === slices.length - 1) append(tail);
      else append(close, true);
      kept.push({ start, end: length });
      // The newline between two fences is where the chunker cuts; it is inserted text too.
      if (index < slices.length - 1) append("\n", true);
    });
  }
  append(text.slice(copied));
  return { text: out.join(""), fences: kept, synthetic: mergeAdjacent(synthetic) };
}

/**
 * [from, to) pieces of a fence body, each at most `room` long, cut at a newline where one is
 * in reach, else at a space, else anywhere safe. What lies between two pieces is whitespace.
 */
function sliceBody(body: string, room: number, marker: string): Array<[number, number]> {
  const slices: Array<[number, number]> = [];
  let at = 0;
  while (body.length - at > room) {
    const reach = at + room;
    const newline = body.lastIndexOf("\n", reach);
    if (newline > at) {
      slices.push([at, newline]);
      at = newline + 1;
      continue;
    }
    const space = lastSpaceCut(body, at, reach, marker);
    if (space !== undefined) {
      slices.push([at, space]);
      at = space + 1;
      continue;
    }
    const cut = hardCut(body, at, reach, marker);
    slices.push([at, cut]);
    at = cut;
  }
  slices.push([at, body.length]);
  return slices;
}

function lastSpaceCut(body: string, at: number, reach: number, marker: string): number | undefined {
  for (let i = Math.min(reach, body.length - 1); i > at; i--) {
    if (isBreakingSpace(body[i]) && isSafeCut(body, at, i, i + 1, marker)) return i;
  }
  return undefined;
}

function hardCut(body: string, at: number, reach: number, marker: string): number {
  const first = safeCut(body, at, reach);
  let cut = first;
  while (!isSafeCut(body, at, cut, cut, marker)) {
    if (cut - 1 - at < 2) return first;
    cut = safeCut(body, at, cut - 1);
  }
  return cut;
}

/**
 * A cut inside a line makes two new lines: the end of this piece and the start of the next.
 * Neither may read as the fence's closing line, or the code would end early when rendered.
 */
function isSafeCut(body: string, at: number, cut: number, next: number, marker: string): boolean {
  const lineStart = Math.max(at, body.lastIndexOf("\n", cut - 1) + 1);
  if (closesFence(body.slice(lineStart, cut), marker)) return false;
  const newline = body.indexOf("\n", next);
  return !closesFence(body.slice(next, newline === -1 ? body.length : newline), marker);
}

function mergeAdjacent(spans: Span[]): Span[] {
  const merged: Span[] = [];
  for (const span of spans) {
    const last = merged.at(-1);
    if (last !== undefined && last.end === span.start) last.end = span.end;
    else merged.push({ ...span });
  }
  return merged;
}
