import { rateRulesFor } from "@gw/channels";
import { createMemoryFastStore } from "@gw/store";
import { describe, expect, it } from "vitest";
import { slackPlugin } from "../channels/slack/plugin.js";
import { telegramPlugin } from "../channels/telegram/plugin.js";
import { PaceAborted, Pacer, type PaceTarget } from "./pacer.js";

const store = () => createMemoryFastStore();
const never = new AbortController().signal;

describe("Pacer", () => {
  it("spaces one Telegram chat's calls a second apart and lets other chats through", async () => {
    const pacer = new Pacer(store());
    const chat: PaceTarget = { account: "tg:default", chat: "42", rules: rateRulesFor(telegramPlugin.rates, "42") };
    const other: PaceTarget = { ...chat, chat: "43" };
    // A turn that had to wait would fail on an aborted signal: these go through at once.
    const now = AbortSignal.abort();
    await pacer.turn(chat, now);
    await pacer.turn(other, now);
    await expect(pacer.turn(chat, now)).rejects.toBeInstanceOf(PaceAborted);
    const started = Date.now();
    await pacer.turn(chat, never);
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
  });

  it("applies the group rule only to negative (group) chat ids", () => {
    expect(rateRulesFor(telegramPlugin.rates, "-100123").map((r) => r.name)).toEqual(["per-chat", "per-group", "per-bot"]);
    expect(rateRulesFor(telegramPlugin.rates, "123").map((r) => r.name)).toEqual(["per-chat", "per-bot"]);
    expect(rateRulesFor([], "x")).toEqual([]);
  });

  it("shares counts between pacers on one store (two replicas)", async () => {
    const shared = store();
    const [a, b] = [new Pacer(shared), new Pacer(shared)];
    const target: PaceTarget = { account: "slack:default", chat: "C1", rules: rateRulesFor(slackPlugin.rates, "C1") };
    const started = Date.now();
    await a.turn(target, never);
    await b.turn(target, never);
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
  });

  it("holds every call during a platform's cooldown, chat-wide or account-wide", async () => {
    const pacer = new Pacer(store());
    const target: PaceTarget = { account: "wa:default", chat: "+15550001", rules: [] };
    await pacer.coolDown(target, 300, "chat");
    const started = Date.now();
    await pacer.turn(target, never);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    await pacer.coolDown(target, 200, "account");
    expect(await pacer.cooldownLeft({ ...target, chat: "+15550002" })).toBeGreaterThan(100);
  });

  it("gives up when the send's deadline passes while waiting", async () => {
    const pacer = new Pacer(store());
    const target: PaceTarget = { account: "tg:default", chat: "1", rules: rateRulesFor(telegramPlugin.rates, "1") };
    await pacer.turn(target, never);
    await expect(pacer.turn(target, AbortSignal.timeout(100))).rejects.toBeInstanceOf(PaceAborted);
  });

  it("waits out a cooldown read ahead (prefetch), and reads again on later steps or when the read failed", async () => {
    const shared = store();
    const pacer = new Pacer(shared);
    const target: PaceTarget = { account: "tg:default", chat: "7", rules: [] };
    await pacer.coolDown(target, 250, "chat");
    const read = pacer.prefetch(target);
    expect(await read).toBeGreaterThan(Date.now());
    const started = Date.now();
    await pacer.turn(target, never, read);
    expect(Date.now() - started).toBeGreaterThanOrEqual(230);

    // A failed read ahead: the turn reads the store itself and still honours the cooldown.
    await pacer.coolDown(target, 250, "chat");
    const failing = new Pacer({ ...shared, values: { ...shared.values, getMany: () => Promise.reject(new Error("down")) } });
    const failed = failing.prefetch(target);
    expect(await failed).toBeUndefined();
    const again = Date.now();
    await pacer.turn(target, never, failed);
    expect(Date.now() - again).toBeGreaterThanOrEqual(230);
  });
});
