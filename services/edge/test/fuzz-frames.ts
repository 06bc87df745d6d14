import {
  AgentParamsSchema,
  DeviceIdParamsSchema,
  NodePairRequestParamsSchema,
  PairRequestIdParamsSchema,
  RequestFrameSchema,
  RunAbortParamsSchema,
  SessionKeyParamsSchema,
  SessionsPatchParamsSchema,
} from "@gw/contracts";
import fc from "fast-check";
import type { z } from "zod";
import { ChatBodySchema as ChatCompletionsBodySchema } from "../src/http/openai/chat-body.js";

/**
 * Generators of malformed and adversarial input for the edge, shared by the bounded property
 * suite (protocol.fuzz.test.ts) and the long `npm run fuzz` command.
 *
 * A frame is text or bytes. Where the text holds the placeholder ID_SLOT, the sender puts a fresh
 * numeric id there, and the edge must answer that id exactly once; every other frame still gets
 * exactly one answer (with `id: null` or an echoed id) because every frame is answered.
 */
export const ID_SLOT = "\u0000ID\u0000";

export interface FuzzFrame {
  kind: string;
  data: string | Uint8Array;
}

const METHODS = [
  "connect",
  "agents.list",
  "agent.identity.get",
  "agent",
  "agent.wait",
  "chat.abort",
  "sessions.list",
  "sessions.preview",
  "sessions.patch",
  "sessions.delete",
  "send",
  "node.pair.request",
  "node.pair.approve",
  "device.token.rotate",
  "device.list",
  "__proto__",
  "constructor",
  "toString",
  "",
];

// Keys that break naive object handling: prototype pollution, shadowed built-ins, our own fields.
const NASTY_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "valueOf",
  "hasOwnProperty",
  "then",
  "id",
  "method",
  "params",
  "jsonrpc",
  "role",
  "auth",
  "token",
];

const key = fc.oneof(fc.constantFrom(...NASTY_KEYS), fc.string({ maxLength: 12 }));

// Number spellings JSON allows but JavaScript numbers cannot hold exactly (or at all).
const numberText = fc.oneof(
  fc.constantFrom("1e400", "-1e400", "-0", "9007199254740993", "0.1e-400", "123456789012345678901234567890"),
  fc.double().filter(Number.isFinite).map((n) => JSON.stringify(n)),
  fc.integer().map(String),
);

/** JSON text of any shape, with nasty keys and numbers (built as text: `__proto__` stays a key). */
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom("null", "true", "false", "{}", "[]", '""'),
    numberText,
    fc.string({ maxLength: 40 }).map((s) => JSON.stringify(s)),
    fc.array(tie("value"), { maxLength: 5 }).map((items) => `[${items.join(",")}]`),
    fc
      .array(fc.tuple(key, tie("value")), { maxLength: 5 })
      .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`),
  ),
})).value;

/** A request-shaped frame where any field may be missing, of the wrong type or hostile. */
const requestShaped = fc
  .record(
    {
      jsonrpc: fc.oneof(fc.constant('"2.0"'), jsonText),
      id: fc.oneof(fc.constant(ID_SLOT), fc.constant(ID_SLOT), jsonText),
      method: fc.oneof(fc.constantFrom(...METHODS).map((m) => JSON.stringify(m)), jsonText),
      params: jsonText,
      extra: fc.tuple(key, jsonText),
    },
    { requiredKeys: ["id"] },
  )
  .map((r) => {
    const parts = Object.entries(r).map(([k, v]) =>
      k === "extra" ? `${JSON.stringify((v as [string, string])[0])}:${(v as [string, string])[1]}` : `"${k}":${v}`,
    );
    return { kind: "request-shaped", data: `{${parts.join(",")}}` };
  });

/** A well-formed request to a real method with hostile params. */
const hostileParams = fc
  .tuple(fc.constantFrom(...METHODS), jsonText)
  .map(([method, params]) => ({
    kind: "hostile-params",
    data: `{"jsonrpc":"2.0","id":${ID_SLOT},"method":${JSON.stringify(method)},"params":${params}}`,
  }));

/** A well-formed `connect` with a wrong credential of any shape: refused and counted by the failed-auth limiter. */
const wrongCredential = fc
  .tuple(
    fc.constantFrom("control", "node", "webchat"),
    fc.constantFrom("token", "password"),
    fc.string({ unit: "binary", minLength: 1, maxLength: 300 }),
  )
  .map(([role, kind, secret]) => ({
    kind: "wrong-credential",
    data: `{"jsonrpc":"2.0","id":${ID_SLOT},"method":"connect","params":${JSON.stringify({ role, auth: { [kind]: secret } })}}`,
  }));

const deepNesting = fc
  .tuple(fc.integer({ min: 100, max: 100_000 }), fc.boolean(), fc.boolean())
  .map(([depth, inParams, balanced]) => {
    const open = "[".repeat(depth);
    const close = balanced ? "]".repeat(depth) : "";
    return {
      kind: "deep-nesting",
      data: inParams
        ? `{"jsonrpc":"2.0","id":${ID_SLOT},"method":"agents.list","params":{"a":${open}${close}}}`
        : `${open}${close}`,
    };
  });

const hugeString = fc
  .tuple(fc.integer({ min: 1_000, max: 600_000 }), fc.constantFrom("method", "params", "id"))
  .map(([size, where]) => {
    const big = JSON.stringify("x".repeat(size));
    const fields = {
      method: where === "method" ? big : '"agents.list"',
      params: where === "params" ? `{"agentId":${big}}` : "{}",
      id: where === "id" ? big : ID_SLOT,
    };
    return {
      kind: "huge-string",
      data: `{"jsonrpc":"2.0","id":${fields.id},"method":${fields.method},"params":${fields.params}}`,
    };
  });

const invalidUtf8 = fc
  .tuple(fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]), fc.boolean())
  .map(([bad, inside]) => {
    const before = Buffer.from(inside ? '{"jsonrpc":"2.0","id":1,"method":"' : "");
    const after = Buffer.from(inside ? '"}' : "");
    return { kind: "invalid-utf8", data: new Uint8Array(Buffer.concat([before, Buffer.from(bad), after])) };
  });

const garbage = fc.oneof(
  fc.uint8Array({ maxLength: 512 }).map((data) => ({ kind: "random-bytes", data })),
  fc.string({ maxLength: 200 }).map((data) => ({ kind: "random-text", data })),
  jsonText.map((data) => ({ kind: "random-json", data })),
);

/**
 * Methods whose valid calls change state (runs, sessions, abort markers), with the params schema
 * the edge validates them by. `connect` is not here: a refused credential is counted by the
 * failed-auth limiter, the one write hostile input may cause (docs/decisions.md).
 */
const STATE_CHANGING_METHODS = new Map<string, z.ZodType>([
  ["agent", AgentParamsSchema],
  ["chat.abort", RunAbortParamsSchema],
  ["agent.abort", RunAbortParamsSchema],
  ["sessions.patch", SessionsPatchParamsSchema],
  ["sessions.reset", SessionKeyParamsSchema],
  ["sessions.delete", SessionKeyParamsSchema],
  ["sessions.compact", SessionKeyParamsSchema],
  ["node.pair.request", NodePairRequestParamsSchema],
  ["node.pair.approve", PairRequestIdParamsSchema],
  ["node.pair.reject", PairRequestIdParamsSchema],
  ["device.token.rotate", DeviceIdParamsSchema],
  ["device.revoke", DeviceIdParamsSchema],
]);

const utf8 = new TextDecoder("utf-8", { fatal: true });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * True for a frame the edge would dispatch, as is, to a state-changing method with valid params:
 * a legitimate request, not hostile input, and it would rightly write to a store. The generators
 * leave such frames out (they are astronomically rare anyway), so "hostile input writes nothing"
 * holds exactly. Bytes count as text, as the edge decodes them.
 */
export function changesState(frame: FuzzFrame): boolean {
  let text: string;
  try {
    text = typeof frame.data === "string" ? frame.data : utf8.decode(frame.data);
  } catch {
    return false;
  }
  const envelope = RequestFrameSchema.safeParse(parseJson(text.replaceAll(ID_SLOT, "1")));
  if (!envelope.success) return false;
  const schema = STATE_CHANGING_METHODS.get(envelope.data.method);
  return schema?.safeParse(envelope.data.params ?? {}).success ?? false;
}

export const fuzzFrame: fc.Arbitrary<FuzzFrame> = fc
  .oneof(
    { weight: 4, arbitrary: requestShaped },
    { weight: 3, arbitrary: hostileParams },
    { weight: 1, arbitrary: wrongCredential },
    { weight: 3, arbitrary: garbage },
    { weight: 1, arbitrary: deepNesting },
    { weight: 1, arbitrary: hugeString },
    { weight: 1, arbitrary: invalidUtf8 },
  )
  .filter((frame) => !changesState(frame));

/** An HTTP request with a hostile body, headers or path. */
export interface FuzzHttp {
  method: string;
  path: string;
  contentType: string;
  body: string;
}

const anyHttp: fc.Arbitrary<FuzzHttp> = fc.record({
  method: fc.constantFrom("POST", "PUT", "GET", "DELETE", "PATCH"),
  path: fc.oneof(
    fc.constantFrom("/v1/chat/completions", "/api/tools/invoke", "/api/send", "/v1/models", "/health", "/hooks/agent"),
    fc.string({ maxLength: 30 }).map((s) => `/${encodeURIComponent(s)}`),
  ),
  contentType: fc.constantFrom(
    "application/json",
    "text/plain",
    "application/x-www-form-urlencoded",
    "application/json; charset=latin1",
  ),
  body: fc.oneof(
    jsonText,
    fc.string({ maxLength: 200 }),
    deepNesting.map((f) => String(f.data).replaceAll(ID_SLOT, "1")),
  ),
});

/**
 * True for a request that would start a run (a valid chat completion) or run a tool (any
 * `/api/tools/invoke` body naming one): legitimate work with effects, not hostile input.
 */
export function startsWork(req: FuzzHttp): boolean {
  if (req.method !== "POST") return false;
  const body = parseJson(req.body);
  if (req.path === "/v1/chat/completions") return ChatCompletionsBodySchema.safeParse(body).success;
  if (req.path === "/api/tools/invoke") {
    return typeof body === "object" && body !== null && typeof (body as { tool?: unknown }).tool === "string";
  }
  return false;
}

export const fuzzHttp: fc.Arbitrary<FuzzHttp> = anyHttp.filter((req) => !startsWork(req));

/**
 * Text or bytes of a frame with its id slot filled in, and whether the id is usable: the frame
 * is a JSON object whose `id` is that number (a duplicate key or broken JSON makes it unusable).
 */
export function materialize(frame: FuzzFrame, id: number): { data: string | Uint8Array; expectsId: boolean } {
  if (typeof frame.data !== "string" || !frame.data.includes(ID_SLOT)) return { data: frame.data, expectsId: false };
  const data = frame.data.replaceAll(ID_SLOT, String(id));
  let expectsId = false;
  try {
    const value = JSON.parse(data) as { id?: unknown } | null;
    expectsId = typeof value === "object" && value !== null && !Array.isArray(value) && value.id === id;
  } catch {
    // not JSON: answered with id null
  }
  return { data, expectsId };
}
