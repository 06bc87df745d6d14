import { describe, expect, it } from "vitest";
import type { SessionSummary } from "@gw/contracts";
import { toSummary } from "../convert.js";
import { EncodedPreviews } from "./encoded-previews.js";
import type { SessionMeta, StoredEntry } from "../model.js";

const meta = (over: Partial<SessionMeta> = {}): SessionMeta => ({
  key: "web:a",
  agentId: "main",
  model: "builtin/echo",
  thinking: "",
  createdAt: 1,
  updatedAt: 2,
  messageCount: 1,
  leafId: "e1",
  gen: "g",
  historySeq: 0,
  ...over,
});
const entry = (body: string): StoredEntry => ({
  id: `id-${body}`,
  parentId: "",
  role: "user",
  sender: "",
  body,
  timestamp: 3,
  runId: "",
  kind: "message",
  meta: "",
});
interface PreviewJson {
  messageCount: number;
  updatedAt: number;
  model: string;
  messages: Array<{ body: string; sender: string; type: string }>;
}
const decodeView = (bytes: Uint8Array): PreviewJson => JSON.parse(Buffer.from(bytes).toString("utf8")) as PreviewJson;
const decode = (bytes: Uint8Array) => {
  const view = decodeView(bytes);
  return { session: view, entries: view.messages };
};

describe("EncodedPreviews", () => {
  it("encodes the preview answer, and reuses it only for the same summary and entry objects", () => {
    const previews = new EncodedPreviews();
    const tail = [entry("b"), entry("a")];
    const first = previews.encode(20, meta(), tail);
    expect(decode(first).entries.map((e) => e.body)).toEqual(["b", "a"]);
    expect(decode(first).session?.messageCount).toBe(1);
    // A copy each time: a caller that scribbles on its bytes cannot spoil the next answer.
    first.fill(0);
    expect(decode(previews.encode(20, meta(), [...tail])).entries.map((e) => e.body)).toEqual(["b", "a"]);
    expect(decode(previews.encode(20, meta({ updatedAt: 9, messageCount: 3 }), tail)).session).toMatchObject({
      updatedAt: 9,
      messageCount: 3,
    });
    expect(decode(previews.encode(20, meta({ model: "x/y" }), tail)).session?.model).toBe("x/y");
    const edited = [{ ...tail[0]!, body: "b2" }, tail[1]!];
    expect(decode(previews.encode(20, meta({ model: "x/y" }), edited)).entries.map((e) => e.body)).toEqual(["b2", "a"]);
    expect(decode(previews.encode(20, meta({ model: "x/y" }), tail.slice(1))).entries.map((e) => e.body)).toEqual(["a"]);
  });

  it("encodes again when any field of the summary changes", () => {
    const previews = new EncodedPreviews();
    const tail = [entry("a")];
    const base = meta();
    const before = previews.encode(20, base, tail);
    for (const field of Object.keys(toSummary(base)) as Array<keyof SessionSummary>) {
      const changed = { ...base, [field]: typeof base[field] === "number" ? 77 : "changed" } as SessionMeta;
      const after = previews.encode(20, changed, tail);
      expect(Buffer.from(after).equals(Buffer.from(before)), field).toBe(false);
      expect(Buffer.from(previews.encode(20, base, tail)).equals(Buffer.from(before)), field).toBe(true);
    }
  });

  it("keeps a bounded number of answers and bytes", () => {
    const previews = new EncodedPreviews({ answers: 3, bytes: 10_000 });
    for (let i = 0; i < 20; i++) previews.encode(20, meta({ key: `web:${i}` }), [entry(`m${i}`)]);
    expect(previews.size.answers).toBe(3);
    previews.encode(20, meta({ key: "web:big" }), [entry("x".repeat(5_000))]);
    expect(previews.size.answers).toBe(3);
    expect(previews.size.bytes).toBeLessThanOrEqual(10_000);
  });

  it("evicts the answer used least recently, whatever order they were made in", () => {
    const previews = new EncodedPreviews({ answers: 3, bytes: 100_000 });
    const tails = { a: [entry("a")], b: [entry("b")], c: [entry("c")], d: [entry("d")] };
    for (const key of ["a", "b", "c"] as const) previews.encode(20, meta({ key: `web:${key}` }), tails[key]);
    previews.encode(20, meta({ key: "web:a" }), tails.a);
    previews.encode(5, meta({ key: "web:b" }), tails.b);
    // Made first but used last, "a" stays; "b" at limit 20 is now the least recently used.
    expect(previews.holds("web:b", 20)).toBe(false);
    expect(["web:a", "web:c"].map((key) => previews.holds(key, 20))).toEqual([true, true]);
    expect(previews.holds("web:b", 5)).toBe(true);
    previews.encode(20, meta({ key: "web:d" }), tails.d);
    expect(previews.holds("web:c", 20)).toBe(false);
    expect(previews.size.answers).toBe(3);
  });
});
