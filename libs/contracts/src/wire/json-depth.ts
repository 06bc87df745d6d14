/**
 * The deepest JSON nesting a client may send. Deeper input is refused before it is parsed:
 * a payload nested 100,000 levels deep parses fine but overflows the stack of every recursive
 * consumer after it (`JSON.stringify`, zod, protobuf Struct encoding).
 */
export const MAX_JSON_DEPTH = 64;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * Whether JSON text nests objects/arrays deeper than `max`, found in one pass without parsing
 * (brackets inside strings do not count). Works on text that is not valid JSON too: it only
 * answers the depth question, and the parser judges the rest.
 */
export function exceedsJsonDepth(text: string, max: number = MAX_JSON_DEPTH): boolean {
  // Nesting never exceeds the number of opening brackets, which indexOf counts at native speed
  // (60 against 450 ns for a WS request frame here): only text with more than `max` of them is walked.
  if (openingBrackets(text, max) <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

/** How many `{` and `[` the text holds, counting no further than `max + 1`. */
function openingBrackets(text: string, max: number): number {
  let n = 0;
  for (let i = text.indexOf("{"); i !== -1; i = text.indexOf("{", i + 1)) if (++n > max) return n;
  for (let i = text.indexOf("["); i !== -1; i = text.indexOf("[", i + 1)) if (++n > max) return n;
  return n;
}

export function jsonDepthMessage(max: number = MAX_JSON_DEPTH): string {
  return `JSON is nested more than ${max} levels deep`;
}

const COLON = 0x3a; // :
const PRIMITIVE = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.){0,256}"|true|false|null)/;

/** Index of the quote that closes the string opening at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  return -1;
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

/**
 * A top-level key's value when it is a primitive (number, short string, boolean, null), read
 * without parsing the nested values around it: how a frame refused for its depth still has its
 * `id` echoed. Undefined when the key is absent, not a primitive, or the text is not an object.
 */
export function topLevelPrimitive(text: string, key: string): unknown {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end === -1) return undefined;
      if (depth === 1) {
        let next = skipSpace(text, end + 1);
        if (text.charCodeAt(next) === COLON && JSON.parse(text.slice(i, end + 1)) === key) {
          next = skipSpace(text, next + 1);
          const match = PRIMITIVE.exec(text.slice(next, next + 300));
          return match ? (JSON.parse(match[0]) as unknown) : undefined;
        }
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return undefined;
}
