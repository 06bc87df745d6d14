/** Character-level helpers shared by the chunker: breaking spaces, URLs and safe hard cuts. */

// Whitespace a line may break at: \s without the no-break spaces (U+00A0, U+2007, U+202F, U+FEFF).
const BREAKING_SPACE = /[\t\n\v\f\r \u1680\u2000-\u2006\u2008-\u200a\u2028\u2029\u205f\u3000]/;

export function isBreakingSpace(ch: string | undefined): boolean {
  return ch !== undefined && BREAKING_SPACE.test(ch);
}

export interface Span {
  start: number;
  end: number;
}

// A scheme URL or a bare www. host, up to the next whitespace: what chat clients linkify.
const URL_PATTERN = /(?:\b[a-z][a-z0-9+.-]*:\/\/|\bwww\.)[^\s<>]+/gi;

export function findUrls(text: string): Span[] {
  return [...text.matchAll(URL_PATTERN)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
}

/** The span that strictly contains `index` (a cut at `index` would split it), if any. */
export function spanAround(spans: readonly Span[], index: number): Span | undefined {
  return spans.find((span) => span.start < index && index < span.end);
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * The cut at or before `to` (and after `from`) that splits no surrogate pair and, where the
 * cluster is not itself longer than the room, no grapheme cluster (an emoji with its modifiers).
 * Needs `to - from >= 2` so one astral character always fits.
 */
export function safeCut(text: string, from: number, to: number): number {
  let cut = to;
  if (cut < text.length && isLow(text.charCodeAt(cut)) && isHigh(text.charCodeAt(cut - 1))) cut -= 1;
  if (cut >= text.length) return cut;
  // Clusters are short: look at a little text on either side of the cut, not the whole part.
  const start = Math.max(from, cut - 64);
  const window = text.slice(start, Math.min(text.length, cut + 32));
  const offset = cut - start;
  let best = 0;
  for (const { index } of graphemes.segment(window)) {
    if (index === offset) return cut;
    if (index > offset) break;
    best = index;
  }
  return best > 0 ? start + best : cut;
}
