import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { corkForTurn } from "./socket-corks.js";

function fakeSocket() {
  const calls: string[] = [];
  return { calls, cork: () => calls.push("cork"), uncork: () => calls.push("uncork") };
}

describe("corkForTurn", () => {
  it("corks each socket once per turn and uncorks every one of them at the turn's end", async () => {
    const a = fakeSocket();
    const b = fakeSocket();
    corkForTurn(a);
    corkForTurn(a);
    corkForTurn(b);
    expect(a.calls).toEqual(["cork"]);
    expect(b.calls).toEqual(["cork"]);
    await nextTurn();
    expect(a.calls).toEqual(["cork", "uncork"]);
    expect(b.calls).toEqual(["cork", "uncork"]);
    corkForTurn(a);
    expect(a.calls).toEqual(["cork", "uncork", "cork"]);
    await nextTurn();
    expect(a.calls).toEqual(["cork", "uncork", "cork", "uncork"]);
    expect(b.calls).toEqual(["cork", "uncork"]);
  });
});
