import { describe, expect, it } from "vitest";
import { given } from "./given.js";

describe("given", () => {
  it("reads an absent field and the empty string an older edge sends alike, as not given", () => {
    expect([given(undefined), given(""), given("main")]).toEqual([undefined, undefined, "main"]);
  });
});
