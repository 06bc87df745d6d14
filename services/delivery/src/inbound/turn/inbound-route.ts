import type { InboundMessage } from "@gw/channels";
import { type Binding, bindingFor, DEFAULT_QUEUE, type QueueSettings } from "@gw/config";
import type { ChannelAccount } from "../../channel-directory.js";
import type { InboundPolicy } from "../../sender-policy.js";

/** Who answers one inbound message, and under which sender policy. */
export interface InboundRoute {
  /** The agent that runs ("" for agents.default). */
  agentId: string;
  /** The index in `bindings` of the binding that chose it; undefined for the channel's own agent. */
  binding: number | undefined;
  /** The account's policy, with the binding's dmPolicy when it sets one. */
  policy: InboundPolicy;
  /** Messages arriving during a run: the binding's queue, else the account's (or channel's), else followup. */
  queue: QueueSettings;
}

/**
 * Routes a message by the config's `bindings` (issue 26 §2): the most specific binding that
 * matches decides the agent and may override dmPolicy and queue; with none, the channel's `agent`.
 */
export function routeOf(bindings: readonly Binding[], account: ChannelAccount, msg: InboundMessage): InboundRoute {
  const index = bindingFor(bindings, {
    channelId: account.channelId,
    accountId: account.accountId,
    chat: msg.chat,
    chatType: msg.chatType,
    sender: msg.sender,
    ...(msg.threadId === undefined ? {} : { threadId: msg.threadId }),
  });
  const binding = index === undefined ? undefined : bindings[index];
  const queue = binding?.queue ?? account.inbound.queue ?? DEFAULT_QUEUE;
  if (binding === undefined) return { agentId: account.inbound.agent ?? "", binding: undefined, policy: account.inbound, queue };
  const policy = binding.dmPolicy === undefined ? account.inbound : { ...account.inbound, dmPolicy: binding.dmPolicy };
  return { agentId: binding.agentId, binding: index, policy, queue };
}
