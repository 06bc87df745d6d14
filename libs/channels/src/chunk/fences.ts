/** Fenced code blocks (CommonMark: ``` or ~~~, up to three spaces of indentation). */

export interface Fence {
  /** Start of the opening line, indentation included. */
  start: number;
  /** End of the closing line (before its newline), or the text's end for an unclosed fence. */
  end: number;
  /** Just after the opening line's newline (`end` when nothing follows the opener). */
  bodyStart: number;
  /** The newline before the closing line, or the text's end for an unclosed fence. */
  bodyEnd: number;
  /** What closes a part of this fence when it must be split: indentation plus the marker. */
  closeMarker: string;
  /** False when the text ends inside the fence (CommonMark then runs it to the end). */
  closed: boolean;
}

const OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

export function findFences(text: string): Fence[] {
  const fences: Fence[] = [];
  let lineStart = 0;
  while (lineStart < text.length) {
    const lineEnd = endOfLine(text, lineStart);
    const open = OPEN.exec(stripCr(text.slice(lineStart, lineEnd)));
    // A backtick fence's info string may not contain backticks (that line is inline code).
    if (open !== null && !(open[2]!.startsWith("`") && open[3]!.includes("`"))) {
      const fence = closeFence(text, lineStart, lineEnd, open[1]!, open[2]!);
      fences.push(fence);
      lineStart = fence.end === text.length ? text.length : fence.end + 1;
      continue;
    }
    lineStart = lineEnd + 1;
  }
  return fences;
}

/** Whether `line` would close a fence opened with `marker`. */
export function closesFence(line: string, marker: string): boolean {
  const close = CLOSE.exec(stripCr(line));
  return close !== null && close[1]![0] === marker[0] && close[1]!.length >= marker.length;
}

function closeFence(text: string, start: number, openerEnd: number, indent: string, marker: string): Fence {
  const bodyStart = Math.min(openerEnd + 1, text.length);
  const closeMarker = indent + marker;
  let lineStart = bodyStart;
  while (lineStart < text.length) {
    const lineEnd = endOfLine(text, lineStart);
    if (closesFence(text.slice(lineStart, lineEnd), marker)) {
      return { start, end: lineEnd, bodyStart, bodyEnd: Math.max(bodyStart, lineStart - 1), closeMarker, closed: true };
    }
    lineStart = lineEnd + 1;
  }
  return { start, end: text.length, bodyStart, bodyEnd: text.length, closeMarker, closed: false };
}

function endOfLine(text: string, from: number): number {
  const nl = text.indexOf("\n", from);
  return nl === -1 ? text.length : nl;
}

function stripCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
