import { describe, expect, it } from "vitest";
import { clientEventFrame, clientEventFrameBytes, decodeClientEvent, encodeClientEvent } from "../src/index.js";

describe("client event frames", () => {
  it("builds the same frame as a string and as bytes, non-ASCII included", () => {
    const event = decodeClientEvent(
      encodeClientEvent({ event: "agent", payload: { runId: "r1", stream: "assistant", data: { text: "héllo ✓ \"q\"" } }, seq: 3 }),
    );
    const text = clientEventFrame(event);
    expect(clientEventFrameBytes(event).toString("utf8")).toBe(text);
    expect(JSON.parse(text)).toEqual({
      event: "agent",
      payload: { runId: "r1", stream: "assistant", data: { text: "héllo ✓ \"q\"" } },
    });
  });
});
