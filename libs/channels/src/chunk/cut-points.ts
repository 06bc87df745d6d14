/** Where a part may end: whitespace runs outside code fences, ranked by how much they separate. */
import { isBreakingSpace, type Span, spanAround } from "./text-units.js";

export const RANK = { word: 0, sentence: 1, line: 2, paragraph: 3 } as const;
export type CutRank = (typeof RANK)[keyof typeof RANK];

export interface Cut {
  /** The part before the cut ends here (exclusive). */
  start: number;
  /** The next part starts here: after the run, keeping indentation that follows a newline. */
  resume: number;
  rank: CutRank;
}

const SENTENCE_END = /[.!?…。！？]/;
const CLOSING = /[)\]"'’”»」』]/;
// Ideographic text has no spaces after a full stop, so these end a sentence on their own.
const CJK_SENTENCE_END = /[。！？]/;

/**
 * Every cut in `text[from, to)`, in order. Nothing inside a `protected` span (the code fences
 * that fit in one part) is a cut; nor is a zero-width cut inside a URL.
 */
export function findCuts(text: string, fences: readonly Span[], urls: readonly Span[], from: number, to: number): Cut[] {
  const cuts: Cut[] = [];
  let fenceIndex = 0;
  let i = from;
  while (i < to) {
    while (fenceIndex < fences.length && fences[fenceIndex]!.end <= i) fenceIndex++;
    const fence = fences[fenceIndex];
    if (fence !== undefined && fence.start <= i) {
      i = fence.end;
      continue;
    }
    const ch = text[i];
    if (!isBreakingSpace(ch)) {
      if (CJK_SENTENCE_END.test(ch!) && i + 1 < to && !isBreakingSpace(text[i + 1]) && !insideFence(fences, i + 1)) {
        if (spanAround(urls, i + 1) === undefined) cuts.push({ start: i + 1, resume: i + 1, rank: RANK.sentence });
      }
      i++;
      continue;
    }
    const stop = Math.min(to, fence?.start ?? to);
    let end = i;
    while (end < stop && isBreakingSpace(text[end])) end++;
    cuts.push(describeRun(text, i, end, fences));
    i = end;
  }
  return cuts;
}

function describeRun(text: string, start: number, end: number, fences: readonly Span[]): Cut {
  const run = text.slice(start, end);
  const newlines = run.split("\n").length - 1;
  const lastNewline = run.lastIndexOf("\n");
  const resume = lastNewline === -1 ? end : start + lastNewline + 1;
  const besideFence = fences.some((fence) => fence.end === start || fence.start === end);
  let rank: CutRank = RANK.word;
  if (newlines >= 2 || (newlines === 1 && besideFence)) rank = RANK.paragraph;
  else if (newlines === 1) rank = RANK.line;
  else if (endsSentence(text, start)) rank = RANK.sentence;
  return { start, resume, rank };
}

function endsSentence(text: string, runStart: number): boolean {
  let i = runStart - 1;
  while (i > 0 && CLOSING.test(text[i]!)) i--;
  return SENTENCE_END.test(text[i] ?? "");
}

function insideFence(fences: readonly Span[], index: number): boolean {
  return fences.some((fence) => fence.start <= index && index < fence.end);
}
