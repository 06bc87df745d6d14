import { describe, expect, it } from "vitest";
import { createScrubber } from "./scrub.js";

describe("createScrubber", () => {
  const scrub = createScrubber(["sk-live-0123456789", 'pa"ss/wo rd']);

  it("removes configured secrets, also JSON- and URL-encoded", () => {
    expect(scrub("invalid key Bearer sk-live-0123456789 (sk-live-0123456789)")).toBe("invalid key Bearer [REDACTED] ([REDACTED])");
    expect(scrub('{"password":"pa\\"ss/wo rd"}')).toBe('{"password":"[REDACTED]"}');
    expect(scrub("https://x.test/login?p=pa%22ss%2Fwo%20rd")).toBe("https://x.test/login?p=[REDACTED]");
  });

  it("removes URL credentials, bot tokens in paths and credential query parameters", () => {
    const plain = createScrubber();
    expect(plain("cannot reach https://user:hunter2@bridge.local:8080/v1 now")).toBe("cannot reach https://[REDACTED]@bridge.local:8080/v1 now");
    expect(plain("http://token@host/x")).toBe("http://[REDACTED]@host/x");
    expect(plain("POST https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage failed")).toBe(
      "POST https://api.telegram.org/bot[REDACTED]/sendMessage failed",
    );
    expect(plain("https://graph.test/v21.0/me?fields=id&access_token=EAAB123&x=1")).toBe(
      "https://graph.test/v21.0/me?fields=id&access_token=[REDACTED]&x=1",
    );
    expect(plain("https://g.test/v1/models?key=AIzaSy123")).toBe("https://g.test/v1/models?key=[REDACTED]");
  });

  it("leaves ordinary text alone", () => {
    const text = "openai answered HTTP 400: bad request; see https://docs.example/errors?lang=en#bot and bot 42";
    expect(scrub(text)).toBe(text);
  });
});
