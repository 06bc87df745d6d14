import type { InboundMessage } from "@gw/channels";
import { DmPolicySchema } from "@gw/channels";
import { type Binding, DEFAULT_QUEUE, gatewayConfigSchema } from "@gw/config";
import { describe, expect, it } from "vitest";
import type { ChannelAccount } from "../../channel-directory.js";
import { routeOf } from "./inbound-route.js";

const account = {
  channelId: "tg",
  accountId: "default",
  inbound: { dmPolicy: "pairing", allowFrom: [], requireMention: true, agent: "main" },
} as unknown as ChannelAccount;
const msg: InboundMessage = { eventId: "1", chat: "42", sender: "42", chatType: "direct", mentioned: false, fromBot: false, text: "hi", sentAt: 0 };

describe("routeOf", () => {
  it("uses the channel's agent and policy when no binding matches", () => {
    expect(routeOf([{ match: { channel: "tg", peer: "7" }, agentId: "other" }], account, msg)).toEqual({
      agentId: "main",
      binding: undefined,
      policy: account.inbound,
      queue: DEFAULT_QUEUE,
    });
  });

  it("takes the queue of the binding, else of the account (or channel), else followup", () => {
    const collecting = { ...account, inbound: { ...account.inbound, queue: { mode: "collect", cap: 20, drop: "oldest" } } } as ChannelAccount;
    const steer = { mode: "steer", cap: 5, drop: "summarize" } as const;
    const bindings: Binding[] = [{ match: { channel: "tg", peer: "42" }, agentId: "personal", queue: steer }];
    expect(routeOf(bindings, collecting, msg).queue).toEqual(steer);
    expect(routeOf(bindings, collecting, { ...msg, chat: "43", sender: "43" }).queue).toMatchObject({ mode: "collect" });
    expect(routeOf([], account, msg).queue).toEqual(DEFAULT_QUEUE);
  });

  it("takes the matching binding's agent and its dmPolicy over the account's", () => {
    const bindings: Binding[] = [
      { match: { channel: "tg" }, agentId: "support" },
      { match: { channel: "tg", peer: "42" }, agentId: "personal", dmPolicy: "open" },
    ];
    const route = routeOf(bindings, account, msg);
    expect(route).toMatchObject({ agentId: "personal", binding: 1, policy: { dmPolicy: "open", agent: "main", requireMention: true } });
    expect(account.inbound.dmPolicy).toBe("pairing");
    expect(routeOf(bindings, account, { ...msg, chat: "43", sender: "43" })).toMatchObject({ agentId: "support", binding: 0, policy: { dmPolicy: "pairing" } });
  });

  it("gives an account without an agent the default agent (\"\")", () => {
    const plain = { ...account, inbound: { ...account.inbound, agent: undefined } } as ChannelAccount;
    expect(routeOf([], plain, msg).agentId).toBe("");
  });

  it("accepts in a binding's dmPolicy exactly the channels' policies", () => {
    const shape = gatewayConfigSchema().shape.bindings.unwrap().element.shape.dmPolicy.unwrap();
    expect(shape.options).toEqual(DmPolicySchema.options);
  });
});
