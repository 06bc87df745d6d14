import { decodeClientEvent, encodeClientEvent, encodeJson, receivedJson } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { encodedEventFrame, encodedSuccessFrame } from "./encoded-frames.js";

describe("encoded frames", () => {
  it("builds an event frame around the payload's bytes as they came, non-ASCII included", () => {
    const payload = { runId: "r1", seq: 3, stream: "assistant" as const, data: { text: "héllo ✓ \"q\"" } };
    const event = decodeClientEvent(encodeClientEvent({ event: "agent", payload: encodeJson(payload), seq: 3 }));
    const text = encodedEventFrame(event.event, receivedJson(event.payloadJson)).toString("utf8");
    expect(text).toBe(JSON.stringify({ event: "agent", payload }));
    expect(JSON.parse(text)).toEqual({
      event: "agent",
      payload: { runId: "r1", seq: 3, stream: "assistant", data: { text: "héllo ✓ \"q\"" } },
    });
  });

  it("builds the success frame successFrame would, for any id", () => {
    const payload = { key: "web:a", messages: [{ body: "ü" }] };
    for (const id of [7, "x\"y", null])
      expect(encodedSuccessFrame(id, encodeJson(payload)).toString("utf8")).toBe(JSON.stringify({ id, ok: true, payload }));
  });
});
