import { describe, expect, it } from "vitest";
import { chunkText } from "./chunk-text.js";

const fence = (info: string, lines: string[]) => ["```" + info, ...lines, "```"].join("\n");

describe("chunkText", () => {
  it("returns short text whole, without surrounding blank lines", () => {
    expect(chunkText("\n\n  Hello there.  \n\n", 100)).toEqual(["  Hello there."]);
  });

  it("returns nothing for empty or blank text", () => {
    expect(chunkText("", 10)).toEqual([]);
    expect(chunkText(" \n\t\n ", 10)).toEqual([]);
  });

  it("refuses a limit that cannot hold one character", () => {
    for (const limit of [0, 1, 1.5, Number.NaN, -4]) {
      expect(() => chunkText("abc", limit)).toThrow(RangeError);
    }
  });

  it("packs whole paragraphs while they fit, then breaks between them", () => {
    const text = "One para.\n\nTwo para.\n\nThree is here.";
    expect(chunkText(text, 22)).toEqual(["One para.\n\nTwo para.", "Three is here."]);
  });

  it("prefers a paragraph break to a later sentence or word break", () => {
    const text = "Short one.\n\nA longer second paragraph. It has two sentences.";
    expect(chunkText(text, 40)).toEqual([
      "Short one.",
      "A longer second paragraph.",
      "It has two sentences.",
    ]);
  });

  it("prefers a line break to a sentence break", () => {
    const text = "- first item. Still first\n- second item";
    expect(chunkText(text, 30)).toEqual(["- first item. Still first", "- second item"]);
  });

  it("breaks after a sentence, closing quotes included, before falling back to words", () => {
    expect(chunkText('He said "stop." Then he left the room', 30)).toEqual(['He said "stop."', "Then he left the room"]);
    expect(chunkText("no sentence ends anywhere in this line", 15)).toEqual([
      "no sentence",
      "ends anywhere",
      "in this line",
    ]);
  });

  it("breaks ideographic text after its full stops, which have no space after them", () => {
    expect(chunkText("一二三。四五六。七八九。", 5)).toEqual(["一二三。", "四五六。", "七八九。"]);
  });

  it("keeps the indentation of a line that starts a part", () => {
    expect(chunkText("intro line\n    indented code\nmore", 20)).toEqual(["intro line", "    indented code", "more"]);
  });

  it("treats CRLF line ends like LF ones", () => {
    expect(chunkText("first para.\r\n\r\nsecond para.", 15)).toEqual(["first para.", "second para."]);
  });

  it("moves a code fence that fits whole into the next part rather than cut it", () => {
    const code = fence("py", ["x = 1", "y = 2"]);
    const text = `Some words before the code.\n${code}\nafter`;
    const parts = chunkText(text, 30);
    expect(parts).toContain(code + "\nafter");
    expect(parts[0]).toBe("Some words before the code.");
  });

  it("does not break at the spaces or blank lines inside a fence", () => {
    const code = fence("", ["a b c d e", "", "f g h i j"]);
    const parts = chunkText(`${code}\n\ntail words here`, code.length);
    expect(parts).toEqual([code, "tail words here"]);
  });

  it("closes and reopens a fence longer than the limit, keeping its info string", () => {
    const lines = Array.from({ length: 8 }, (_, i) => `line ${i} of code`);
    const parts = chunkText(fence("ts", lines), 48);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(48);
      expect(part.startsWith("```ts\n")).toBe(true);
      expect(part.endsWith("\n```")).toBe(true);
    }
    const bodies = parts.flatMap((part) => part.split("\n").slice(1, -1));
    expect(bodies).toEqual(lines);
  });

  it("splits tilde fences with their own marker and indentation", () => {
    const text = ["  ~~~~", "aaaa bbbb", "cccc dddd", "eeee ffff", "  ~~~~"].join("\n");
    const parts = chunkText(text, 26);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.startsWith("  ~~~~\n")).toBe(true);
      expect(part.endsWith("\n  ~~~~")).toBe(true);
    }
  });

  it("leaves an unclosed fence unclosed in its last part", () => {
    const parts = chunkText(["```", "one line here", "two line here", "three lines"].join("\n"), 24);
    expect(parts.at(-1)!.endsWith("```")).toBe(false);
    for (const part of parts.slice(0, -1)) expect(part.endsWith("\n```")).toBe(true);
  });

  it("cuts a code line too long for a part at a space, then anywhere", () => {
    const parts = chunkText(fence("", ["alpha beta gamma delta", "x".repeat(30)]), 20);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(20);
    expect(parts.join("").replace(/```|\s/g, "")).toBe("alphabetagammadelta" + "x".repeat(30));
  });

  it("never starts a piece of a split fence with a line that would close it", () => {
    const parts = chunkText(fence("", ["aaaaaaaaa ``` bbbbbbbbb"]), 18);
    for (const part of parts) {
      const lines = part.split("\n");
      expect(lines.slice(1, -1).some((line) => /^\s*`{3,}\s*$/.test(line))).toBe(false);
    }
  });

  it("splits a fence like prose when the limit cannot even hold its fence lines", () => {
    const parts = chunkText("```a-very-long-info-string\nbody\n```", 12);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(12);
    expect(parts.join("").replace(/\s/g, "")).toBe("```a-very-long-info-stringbody```");
  });

  it("starts a part with a URL rather than cut through it", () => {
    expect(chunkText("see https://example.com/abc now", 24)).toEqual(["see", "https://example.com/abc", "now"]);
    expect(chunkText("xxxx(https://e.com/abcdef", 12)).toEqual(["xxxx(", "https://e.co", "m/abcdef"]);
  });

  it("hard-splits only a token longer than the limit", () => {
    expect(chunkText("ab " + "c".repeat(12) + " de", 5)).toEqual(["ab", "ccccc", "ccccc", "cc de"]);
  });

  it("counts UTF-16 code units and never splits a surrogate pair", () => {
    const parts = chunkText("😀".repeat(5), 5);
    expect(parts).toEqual(["😀😀", "😀😀", "😀"]);
    expect(chunkText("a😀b", 2)).toEqual(["a", "😀", "b"]);
  });

  it("keeps an emoji with its modifier together when it fits", () => {
    const thumb = "👍🏽"; // four code units
    expect(chunkText("ab" + thumb + thumb, 7)).toEqual(["ab" + thumb, thumb]);
  });

  it("splits a cluster longer than the limit between its code points only", () => {
    const family = "👨‍👩‍👧‍👦"; // eleven code units
    const parts = chunkText(family, 4);
    expect(parts.join("")).toBe(family);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(4);
      expect(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(part)).toBe(false);
    }
  });
});
