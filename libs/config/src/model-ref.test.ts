import { describe, expect, it } from "vitest";
import { parseModelRef } from "./index.js";

describe("parseModelRef", () => {
  it("splits at the first slash so model names may contain slashes", () => {
    expect(parseModelRef("builtin/echo")).toEqual({ provider: "builtin", model: "echo" });
    expect(parseModelRef("openrouter/meta-llama/llama-3")).toEqual({
      provider: "openrouter",
      model: "meta-llama/llama-3",
    });
  });

  it.each(["echo", "/echo", "openai/", "Open AI/x", ""])("rejects %j", (ref) => {
    expect(() => parseModelRef(ref)).toThrow('expected "<provider>/<model>"');
  });
});
