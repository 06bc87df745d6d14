import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SessionMeta } from "../model.js";
import { newestFirst, newestPage } from "./newest-page.js";

const meta = (key: string, updatedAt: number) => ({ key, updatedAt }) as SessionMeta;

describe("newestPage", () => {
  it("equals sorting everything and slicing, for any items and page", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ key: fc.string({ maxLength: 3 }), updatedAt: fc.integer({ min: 0, max: 20 }) }), {
          maxLength: 300,
        }),
        fc.nat(320),
        fc.integer({ min: 1, max: 60 }),
        (raw, offset, limit) => {
          const items = raw.map((r) => meta(r.key, r.updatedAt));
          const expected = [...items].sort(newestFirst).slice(offset, offset + limit);
          expect(newestPage(items, offset, limit)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("does not reorder its input", () => {
    const items = [meta("a", 1), meta("b", 3), meta("c", 2)];
    newestPage(items, 0, 1);
    expect(items.map((m) => m.key)).toEqual(["a", "b", "c"]);
  });
});
