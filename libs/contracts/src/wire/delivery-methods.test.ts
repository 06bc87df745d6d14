import { describe, expect, it } from "vitest";
import { ChannelsPairingApproveParamsSchema, PollParamsSchema, SendParamsSchema } from "./delivery-methods.js";

const send = (channel: unknown) => SendParamsSchema.safeParse({ to: "4242", message: "hi", idempotencyKey: "k1", channel });
const poll = (channel: unknown) =>
  PollParamsSchema.safeParse({ to: "4242", question: "Q?", options: ["a", "b"], idempotencyKey: "k1", channel });

describe("the channel param of send and poll", () => {
  it("takes any id spelled like a session-key prefix: whether it is configured is delivery's answer", () => {
    for (const channel of ["telegram", "Telegram", "TG", "tg.eu-1", "ops_2", "x".repeat(64)]) {
      expect(send(channel).success, channel).toBe(true);
      expect(poll(channel).success, channel).toBe(true);
      expect(ChannelsPairingApproveParamsSchema.safeParse({ channel, code: "ABCD" }).success, channel).toBe(true);
    }
  });

  it("refuses what cannot be a channel id, naming the field", () => {
    for (const channel of ["", "tele gram", "-tg", ".tg", "tg/1", "tg:1", "tél", "x".repeat(65), 7]) {
      const parsed = send(channel);
      expect(parsed.success, String(channel)).toBe(false);
      expect(parsed.error?.issues[0]?.path).toEqual(["channel"]);
      expect(poll(channel).success, String(channel)).toBe(false);
    }
  });
});
