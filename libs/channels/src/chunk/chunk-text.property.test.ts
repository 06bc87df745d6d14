import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkText, layoutChunks } from "./chunk-text.js";
import { findFences } from "./fences.js";
import { findUrls } from "./text-units.js";

const nonWhitespace = (text: string) => text.replace(/\s+/g, "");

/** The parts' text with the inserted fence lines taken out again, joined. */
function originalContent(text: string, limit: number): string {
  const layout = layoutChunks(text, limit);
  const inserted = new Uint8Array(layout.text.length);
  for (const span of layout.synthetic) inserted.fill(1, span.start, span.end);
  return layout.parts
    .map((part) => {
      let kept = "";
      for (let i = part.start; i < part.end; i++) if (inserted[i] === 0) kept += layout.text[i];
      return kept;
    })
    .join("");
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function expectWellFormed(parts: string[], limit: number): void {
  for (const part of parts) {
    expect(part.length).toBeLessThanOrEqual(limit);
    expect(part.trim()).not.toBe("");
    expect(LONE_SURROGATE.test(part)).toBe(false);
  }
}

// Pieces that exercise every rule: spaces, line and paragraph breaks, sentence ends, fence
// markers, URLs, astral characters and clusters, ideographic full stops, CRLF.
const piece = fc.constantFrom(
  "a", "word", "Zz", " ", " ", "  ", "\n", "\n\n", "\r\n", "\t", ".", "!", "?", '."', "`", "```", "```js", "~~~",
  "https://ex.am/ple?q=1", "www.x.io/p", "😀", "👍🏽", "👨‍👩‍👧‍👦", "一二", "。", "é", "\u00a0",
);
const arbitraryText = fc.array(piece, { maxLength: 120 }).map((pieces) => pieces.join(""));

const word = fc.stringMatching(/^[a-z]{1,9}$/);
const sentence = fc.array(word, { minLength: 1, maxLength: 8 }).map((words) => words.join(" ") + ".");
const url = fc.stringMatching(/^[a-z]{1,8}(\/[a-z0-9]{1,8}){0,3}$/).map((path) => `https://example.org/${path}`);
const prose = fc
  .array(fc.oneof(sentence, url), { minLength: 1, maxLength: 6 })
  .map((items) => items.join(" "));
const codeLine = fc.stringMatching(/^ {0,4}[a-z0-9=(){};. ]{0,30}$/);
const codeFence = fc
  .tuple(fc.constantFrom("", "ts", "py", "sh"), fc.array(codeLine, { maxLength: 12 }))
  .map(([info, lines]) => ["```" + info, ...lines, "```"].join("\n"));
const markdown = fc
  .array(fc.oneof({ weight: 3, arbitrary: prose }, { weight: 1, arbitrary: codeFence }), { minLength: 1, maxLength: 8 })
  .map((blocks) => blocks.join("\n\n"));

describe("chunkText properties", () => {
  it("any text: parts fit, are not blank, split no surrogate pair, and keep every character in order", () => {
    fc.assert(
      fc.property(arbitraryText, fc.integer({ min: 2, max: 60 }), (text, limit) => {
        const parts = chunkText(text, limit);
        expectWellFormed(parts, limit);
        expect(nonWhitespace(originalContent(text, limit))).toBe(nonWhitespace(text));
      }),
      { numRuns: 400 },
    );
  });

  it("markdown: parts are valid fences, whole fences and URLs that fit are never cut", () => {
    fc.assert(
      fc.property(markdown, fc.integer({ min: 24, max: 300 }), (text, limit) => {
        const parts = chunkText(text, limit);
        expectWellFormed(parts, limit);
        expect(nonWhitespace(originalContent(text, limit))).toBe(nonWhitespace(text));
        for (const part of parts) {
          for (const fence of findFences(part)) expect(fence.closed).toBe(true);
        }
        for (const fence of findFences(text)) {
          const whole = text.slice(fence.start, fence.end);
          if (whole.length <= limit) expect(parts.some((part) => part.includes(whole))).toBe(true);
        }
        for (const span of findUrls(text)) {
          const link = text.slice(span.start, span.end);
          if (link.length <= limit) expect(parts.some((part) => part.includes(link))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
