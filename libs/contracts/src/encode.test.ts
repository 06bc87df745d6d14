import { describe, expect, it } from "vitest";
import { encodeMessage } from "./encode.js";
import { ClientEvent } from "./gen/gateway/v1/events.pb.js";
import { RpcReply } from "./gen/gateway/v1/common.pb.js";

const event = (n: number, payload = `{"n":${n}}`) => ({
  event: `e${n}`,
  payloadJson: Buffer.from(payload),
  sessionKey: `s${n}`,
  runId: "",
  seq: n,
  finalRecordJson: Buffer.alloc(0),
});

describe("encodeMessage (one reused writer)", () => {
  it("encodes exactly what a fresh writer does, and earlier results stay intact", () => {
    const first = encodeMessage(ClientEvent, event(1));
    const second = encodeMessage(ClientEvent, event(2));
    expect(first).toEqual(ClientEvent.encode(event(1)).finish());
    expect(second).toEqual(ClientEvent.encode(event(2)).finish());
    expect(ClientEvent.decode(first).event).toBe("e1");
    expect(ClientEvent.decode(second).seq).toBe(2);
  });

  it("starts clean after an encode that threw half way", () => {
    // Fields before `seq` are written by the time it throws, so the writer holds half a message.
    const broken = Object.defineProperty({ ...event(3) }, "seq", {
      get() {
        throw new Error("unreadable");
      },
    });
    expect(() => encodeMessage(ClientEvent, broken)).toThrow("unreadable");
    expect(encodeMessage(ClientEvent, event(4))).toEqual(ClientEvent.encode(event(4)).finish());
  });

  it("handles a message far bigger than the writer keeps, then small ones again", () => {
    const big = "x".repeat(200_000);
    const bytes = encodeMessage(ClientEvent, event(5, JSON.stringify(big)));
    expect(ClientEvent.decode(bytes).payloadJson.length).toBe(200_002);
    const value = Buffer.from("ok");
    expect(RpcReply.decode(encodeMessage(RpcReply, { outcome: { $case: "result", value } })).outcome).toEqual({
      $case: "result",
      value,
    });
  });
});
