import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./index.js";

function capture(): { stream: Writable; lines: () => Record<string, unknown>[]; raw: () => string } {
  let text = "";
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return {
    stream,
    raw: () => text,
    lines: () =>
      text
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe("createLogger", () => {
  it("writes JSON lines tagged with the service and honours the level", () => {
    const out = capture();
    const logger = createLogger({ service: "edge", level: "warn", destination: out.stream });
    logger.info("hidden");
    logger.warn({ n: 1 }, "shown");
    expect(out.lines()).toEqual([
      expect.objectContaining({ service: "edge", level: 40, n: 1, msg: "shown" }),
    ]);
  });

  it("still scrubs configured secrets from a child logger without path redaction (the access log)", () => {
    const out = capture();
    const logger = createLogger({ service: "edge", secrets: ["s3cr3t-value-123"], destination: out.stream });
    logger.child({}, { redact: [] }).info({ path: "/hook/s3cr3t-value-123", token: "plain" }, "http request");
    expect(out.raw()).not.toContain("s3cr3t-value-123");
    expect(out.lines()[0]).toMatchObject({ path: "/hook/[REDACTED]", token: "plain" });
  });

  it("redacts well-known credential fields", () => {
    const out = capture();
    const logger = createLogger({ service: "edge", destination: out.stream });
    logger.info(
      {
        req: { headers: { authorization: "Bearer abc", "x-gateway-token": "hook", host: "localhost" } },
        token: "t1",
        provider: { apiKey: "k1", baseUrl: "http://x" },
        channel: { botToken: "b1", signingSecret: "s1", secret: "s2", password: "p1" },
        auth: { method: "bearer", token: "t2" },
      },
      "request",
    );
    const [line] = out.lines();
    expect(line).toMatchObject({
      req: { headers: { authorization: "[REDACTED]", "x-gateway-token": "[REDACTED]", host: "localhost" } },
      token: "[REDACTED]",
      provider: { apiKey: "[REDACTED]", baseUrl: "http://x" },
      channel: {
        botToken: "[REDACTED]",
        signingSecret: "[REDACTED]",
        secret: "[REDACTED]",
        password: "[REDACTED]",
      },
      auth: { method: "[REDACTED]", token: "[REDACTED]" },
    });
  });

  it("scrubs configured secret values wherever they appear, including JSON-escaped and in child loggers", () => {
    const out = capture();
    const quoted = 'pa"ss\\word';
    const logger = createLogger({
      service: "runner",
      secrets: ["sk-live-123456", quoted, "abc", "sk-live-123456-long"],
      destination: out.stream,
    });
    logger.info(
      { note: "key is sk-live-123456 ok", nested: { deep: ["x sk-live-123456-long y"] } },
      "using sk-live-123456",
    );
    logger.child({ run: 1 }).error(new Error(`login failed with ${quoted}`));
    // Values under the length floor are left alone: they would match ordinary text.
    logger.info("abc is fine");
    const raw = out.raw();
    expect(raw).not.toContain("sk-live");
    expect(raw).not.toContain("ss\\\\word");
    const [first, second, third] = out.lines();
    expect(first).toMatchObject({
      msg: "using [REDACTED]",
      note: "key is [REDACTED] ok",
      nested: { deep: ["x [REDACTED] y"] },
    });
    expect(second).toMatchObject({ run: 1, err: { message: "login failed with [REDACTED]" } });
    expect(third).toMatchObject({ msg: "abc is fine" });
  });
});
