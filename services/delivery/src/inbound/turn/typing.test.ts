import type { ChannelAdapter } from "@gw/channels";
import { createLogger } from "@gw/runtime";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startTyping } from "./typing.js";

const logger = createLogger({ service: "test", level: "silent" });

function recorder(opts: { hides: boolean; fails?: boolean }) {
  const calls: string[] = [];
  const adapter = {
    typing: {
      show: async (chat: string, threadId: string | undefined) => {
        calls.push(`show ${chat} ${threadId ?? "-"}`);
        if (opts.fails) throw new Error("platform down");
      },
      ...(opts.hides ? { hide: async (chat: string) => void calls.push(`hide ${chat}`) } : {}),
    },
  } as unknown as ChannelAdapter;
  return { adapter, calls };
}

describe("startTyping", () => {
  afterEach(() => vi.useRealTimers());

  it("shows at once, renews every 4 s while the agent works, and stops (hiding where it can) when told", async () => {
    vi.useFakeTimers();
    const { adapter, calls } = recorder({ hides: true });
    const stop = startTyping(adapter, "c1", "t9", logger);
    await vi.advanceTimersByTimeAsync(8_500);
    expect(calls).toEqual(["show c1 t9", "show c1 t9", "show c1 t9"]);
    stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toEqual(["show c1 t9", "show c1 t9", "show c1 t9", "hide c1"]);
  });

  it("does nothing on a platform without it, and never throws for a failing platform", async () => {
    expect(() => startTyping({} as ChannelAdapter, "c1", undefined, logger)()).not.toThrow();
    const { adapter, calls } = recorder({ hides: false, fails: true });
    const stop = startTyping(adapter, "c2", undefined, logger);
    await new Promise((r) => setTimeout(r, 10));
    stop();
    expect(calls).toEqual(["show c2 -"]);
  });
});
