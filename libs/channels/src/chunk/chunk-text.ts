/**
 * Splits a message into parts a platform accepts. Each part is as full as it can be while
 * ending at the strongest boundary in reach: a paragraph, then a line, then a sentence, then a
 * word. A code fence is never cut (one too long for a part is closed and reopened across
 * parts), nor is a URL; only a single token longer than the limit is cut inside, and never
 * through a surrogate pair or, where it fits, a grapheme cluster. Lengths are UTF-16 code units.
 */
import { type Cut, findCuts } from "./cut-points.js";
import { findFences } from "./fences.js";
import { splitLongFences } from "./split-fences.js";
import { findUrls, isBreakingSpace, safeCut, type Span, spanAround } from "./text-units.js";

/** The smallest limit that always fits one character (an astral one takes two code units). */
export const MIN_CHUNK_LIMIT = 2;

/** The parts of `text`, in order; none empty or whitespace only, none longer than `limit`. */
export function chunkText(text: string, limit: number): string[] {
  // Most messages fit in one part: no need to find fences, URLs and boundaries to keep them whole.
  if (text.length <= limit && limit >= MIN_CHUNK_LIMIT && Number.isInteger(limit) && !/^\s|\s$/.test(text) && text !== "") {
    return [text];
  }
  const layout = layoutChunks(text, limit);
  return layout.parts.map((part) => layout.text.slice(part.start, part.end));
}

export interface ChunkLayout {
  /** `text` with the fence lines inserted to split long code fences. */
  text: string;
  /** Those inserted pieces (tests take them out to compare with the input). */
  synthetic: Span[];
  /** Each part as a range of `text`. */
  parts: Span[];
}

export function layoutChunks(input: string, limit: number): ChunkLayout {
  if (!Number.isInteger(limit) || limit < MIN_CHUNK_LIMIT) {
    throw new RangeError(`chunk limit must be an integer of at least ${MIN_CHUNK_LIMIT}, got ${limit}`);
  }
  const virtual = splitLongFences(input, findFences(input), limit);
  const { text, fences } = virtual;
  const urls = findUrls(text);
  const end = contentEnd(text);
  let pos = contentStart(text, end);
  const cuts = findCuts(text, fences, urls, pos, end);
  const parts: Span[] = [];
  // No-break spaces are not break points, but a part of nothing else is still blank.
  const push = (start: number, stop: number) => {
    if (/\S/.test(text.slice(start, stop))) parts.push({ start, end: stop });
  };
  let next = 0;
  while (pos < end) {
    if (end - pos <= limit) {
      push(pos, end);
      break;
    }
    while (next < cuts.length && cuts[next]!.start <= pos) next++;
    const cut = bestCut(cuts, next, pos + limit);
    if (cut !== undefined) {
      push(pos, cut.start);
      pos = cut.resume;
      continue;
    }
    if (isBreakingSpace(text[pos])) {
      // Kept indentation before a token too long for a part: drop it rather than send it alone.
      while (isBreakingSpace(text[pos])) pos++;
      continue;
    }
    // No boundary in reach: one token is longer than the limit.
    const hard = hardCut(text, pos, pos + limit, fences, urls);
    push(pos, hard);
    pos = hard;
  }
  return { text, synthetic: virtual.synthetic, parts };
}

/** The strongest cut ending a part at or before `reach`; the latest among equals. */
function bestCut(cuts: readonly Cut[], from: number, reach: number): Cut | undefined {
  let best: Cut | undefined;
  for (let i = from; i < cuts.length && cuts[i]!.start <= reach; i++) {
    if (best === undefined || cuts[i]!.rank >= best.rank) best = cuts[i];
  }
  return best;
}

function hardCut(text: string, pos: number, reach: number, fences: readonly Span[], urls: readonly Span[]): number {
  let cut = reach;
  // Start the next part with the fence or URL rather than cut into it, when something precedes it.
  for (const spans of [fences, urls]) {
    const around = spanAround(spans, cut);
    if (around !== undefined && around.start > pos) cut = around.start;
  }
  return cut === reach ? safeCut(text, pos, reach) : cut;
}

function contentEnd(text: string): number {
  let end = text.length;
  while (end > 0 && isBreakingSpace(text[end - 1])) end--;
  return end;
}

/** Skips leading blank lines, keeping the first line's indentation (it may be an indented code block). */
function contentStart(text: string, end: number): number {
  let i = 0;
  let lineStart = 0;
  while (i < end && isBreakingSpace(text[i])) {
    if (text[i] === "\n") lineStart = i + 1;
    i++;
  }
  return i === end ? end : lineStart;
}
