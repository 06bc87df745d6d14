import { describe, expect, it } from "vitest";
import { failureReply } from "./inbound-turn.js";

const replies = { failureReply: "It failed. ", timeoutReply: "Too slow." };

describe("failureReply", () => {
  it("tells a timeout apart from every other failure", () => {
    expect(failureReply("TIMEOUT", replies)).toBe("Too slow.");
    for (const code of ["MODEL_ERROR", "UNAVAILABLE", "INTERNAL"]) expect(failureReply(code, replies)).toBe("It failed.");
  });

  it("sends nothing for an operator's abort, or when the reply is configured empty", () => {
    expect(failureReply("ABORTED", replies)).toBe("");
    expect(failureReply("MODEL_ERROR", { ...replies, failureReply: "  " })).toBe("");
  });
});
