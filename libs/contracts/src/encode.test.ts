import { describe, expect, it } from "vitest";
import { encodeMessage, encodeTransient } from "./encode.js";
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

  it("encodeTransient encodes the same bytes, interleaved with encodeMessage, after a throw and after a big message", () => {
    for (let n = 0; n < 50; n++) {
      const transient = encodeTransient(ClientEvent, event(n, `{"n":${"9".repeat(n * 40)}}`));
      const plain = encodeMessage(ClientEvent, event(n + 1));
      expect(Buffer.from(transient).equals(Buffer.from(ClientEvent.encode(event(n, `{"n":${"9".repeat(n * 40)}}`)).finish()))).toBe(true);
      expect(Buffer.from(plain).equals(Buffer.from(ClientEvent.encode(event(n + 1)).finish()))).toBe(true);
    }
    const broken = Object.defineProperty({ ...event(3) }, "seq", {
      get() {
        throw new Error("unreadable");
      },
    });
    expect(() => encodeTransient(ClientEvent, broken)).toThrow("unreadable");
    const big = encodeTransient(ClientEvent, event(6, JSON.stringify("y".repeat(100_000))));
    expect(ClientEvent.decode(big).payloadJson.length).toBe(100_002);
    const small = encodeTransient(ClientEvent, event(7));
    expect(Buffer.from(small).equals(Buffer.from(ClientEvent.encode(event(7)).finish()))).toBe(true);
    expect(encodeTransient(RpcReply, { outcome: undefined }).length).toBe(0);
  });
});
