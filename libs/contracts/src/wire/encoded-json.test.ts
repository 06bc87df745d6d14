import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isGatewayError } from "../errors.js";
import { RunRecordSchema } from "../run-record.js";
import { decodeJson, encodeJson, isEncodedJson, receivedJson, spliceJson } from "./encoded-json.js";

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return isGatewayError(err) ? `${err.code}: ${err.message}` : String(err);
  }
  return "no error";
};

describe("EncodedJson", () => {
  it("encodes once and decodes through the schema, non-ASCII included", () => {
    const json = encodeJson({ key: "web:ü", n: 2 });
    expect(isEncodedJson(json)).toBe(true);
    expect(decodeJson(json, z.object({ key: z.string(), n: z.number() }), "thing")).toEqual({ key: "web:ü", n: 2 });
  });

  it("refuses JSON that is not what the schema says, and text that is not JSON, as INTERNAL", () => {
    const schema = z.object({ key: z.string() });
    expect(codeOf(() => decodeJson(encodeJson({ key: 1 }), schema, "thing"))).toBe("INTERNAL: malformed thing");
    expect(codeOf(() => decodeJson(Buffer.from("{nope"), schema, "thing"))).toBe("INTERNAL: malformed thing");
    const record = { runId: "r", sessionKey: "s", agentId: "", state: "done", edgeId: "e", createdAt: 0, updatedAt: 0 };
    expect(decodeJson(encodeJson(record), RunRecordSchema, "record")).toEqual(record);
    expect(codeOf(() => decodeJson(encodeJson({ ...record, state: "weird" }), RunRecordSchema, "record"))).toMatch(/^INTERNAL/);
    const badCode = { ...record, state: "error", error: { code: "NOPE", message: "x" } };
    expect(codeOf(() => decodeJson(encodeJson(badCode), RunRecordSchema, "record"))).toMatch(/^INTERNAL/);
  });

  it("takes a bus field's bytes without copying them, and splices them into one exact buffer", () => {
    const backing = new Uint8Array(Buffer.from('xx{"a":1}yy'));
    const field = backing.subarray(2, 9);
    const received = receivedJson<{ a: number }>(field);
    expect(received.toString("utf8")).toBe('{"a":1}');
    backing[7] = "2".charCodeAt(0);
    expect(received.toString("utf8")).toBe('{"a":2}');
    const frame = spliceJson(Buffer.from('{"payload":'), received, Buffer.from("}"));
    expect(frame.toString("utf8")).toBe('{"payload":{"a":2}}');
    expect(frame.length).toBe(Buffer.byteLength('{"payload":{"a":2}}'));
    const texted = spliceJson('{"id":"ü","payload":', received, Buffer.from("}"));
    expect(JSON.parse(texted.toString("utf8"))).toEqual({ id: "ü", payload: { a: 2 } });
    expect(texted.length).toBe(Buffer.byteLength('{"id":"ü","payload":{"a":2}}'));
  });
});
