import { describe, expect, it } from "vitest";
import type { WakeEvent } from "../queues/wake-queue.js";
import { eventsForTurn, MAX_EVENT_CHARS, MAX_TURN_MESSAGE_BYTES, turnMessage } from "./turn-message.js";

const AT = Date.UTC(2026, 10, 23, 10, 0, 0);
const event = (i: number, text: string, source = "wake"): WakeEvent => ({ key: `k${String(i).padStart(4, "0")}`, text, source, at: AT + i });
const bytes = (text: string) => Buffer.byteLength(text, "utf8");

describe("turnMessage", () => {
  it("lists the events oldest first under a count, each text cut at MAX_EVENT_CHARS", () => {
    const long = "x".repeat(MAX_EVENT_CHARS + 5);
    expect(turnMessage([event(0, "Build 41 failed"), event(1, long, "hooks/github")])).toBe(
      "Heartbeat: 2 system events since the last heartbeat, oldest first.\n" +
        "[2026-11-23T10:00:00.000Z] wake: Build 41 failed\n" +
        `[2026-11-23T10:00:00.001Z] hooks/github: ${"x".repeat(MAX_EVENT_CHARS)}… (5 more characters)`,
    );
    expect(turnMessage([event(0, "one")])).toMatch(/^Heartbeat: 1 system event since/);
  });
});

describe("eventsForTurn", () => {
  it("takes every event while the message fits", () => {
    const events = Array.from({ length: 100 }, (_, i) => event(i, `text ${i}`));
    expect(eventsForTurn(events)).toBe(100);
    expect(eventsForTurn([])).toBe(0);
  });

  it("takes the longest prefix whose message fits in the byte limit, counting UTF-8, not characters", () => {
    // 16,000 three-byte characters: 48 KB an event, so 100 of them would make a 4.8 MB message.
    const events = Array.from({ length: 100 }, (_, i) => event(i, "€".repeat(MAX_EVENT_CHARS)));
    const n = eventsForTurn(events);
    expect(n).toBe(5);
    expect(bytes(turnMessage(events.slice(0, n)))).toBeLessThanOrEqual(MAX_TURN_MESSAGE_BYTES);
    expect(bytes(turnMessage(events.slice(0, n + 1)))).toBeGreaterThan(MAX_TURN_MESSAGE_BYTES);
  });

  it("is exact at the limit, for any limit", () => {
    const events = Array.from({ length: 40 }, (_, i) => event(i, "ü".repeat(50 + ((i * 37) % 200))));
    for (let limit = 200; limit < 12_000; limit += 97) {
      const n = eventsForTurn(events, limit);
      expect(n).toBeGreaterThanOrEqual(1);
      if (n > 1) expect(bytes(turnMessage(events.slice(0, n)))).toBeLessThanOrEqual(limit);
      if (n < events.length) expect(bytes(turnMessage(events.slice(0, n + 1)))).toBeGreaterThan(limit);
    }
  });

  it("always takes the first event, so the queue moves on every turn", () => {
    expect(eventsForTurn([event(0, "a long text"), event(1, "b")], 10)).toBe(1);
  });
});
