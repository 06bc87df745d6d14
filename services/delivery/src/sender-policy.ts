import type { DmPolicy, InboundMessage } from "@gw/channels";
import type { QueueSettings } from "@gw/config";

/** Who may talk to the agent through one account (DESIGN §7 `dmPolicy`, `allowFrom`, `groups`). */
export interface InboundPolicy {
  dmPolicy: DmPolicy;
  /** Sender ids answered without pairing, normalised (sameSender); "*" allows everyone. */
  allowFrom: readonly string[];
  /** In groups, answer only when the bot is mentioned or replied to. */
  requireMention: boolean;
  /** The agent that answers (undefined: the default agent). */
  agent?: string;
  /** The account's queue mode for messages arriving during a run (undefined: followup). */
  queue?: QueueSettings;
}

/** The settings keys every channel kind shares (libs/channels channel-settings.ts). */
export interface InboundSettings {
  dmPolicy: DmPolicy;
  allowFrom: string[];
  agent?: string;
  groups?: { requireMention: boolean };
  queue?: QueueSettings;
}

export function inboundPolicyOf(settings: InboundSettings): InboundPolicy {
  return {
    dmPolicy: settings.dmPolicy,
    allowFrom: settings.allowFrom.map(normaliseSender),
    requireMention: settings.groups?.requireMention ?? true,
    ...(settings.agent === undefined ? {} : { agent: settings.agent }),
    ...(settings.queue === undefined ? {} : { queue: settings.queue }),
  };
}

/** Sender ids compare without case or surrounding space (e-mail addresses, Slack ids). */
export function normaliseSender(sender: string): string {
  return sender.trim().toLowerCase();
}

export type Verdict =
  /** Run the agent and answer. */
  | { kind: "answer" }
  /** An unknown sender in a direct chat under dmPolicy "pairing": send a pairing code. */
  | { kind: "pair" }
  /** No answer; `reason` goes to the debug log. */
  | { kind: "ignore"; reason: string };

/** Whether the sender is on the account's allowFrom list. */
export function allowListed(policy: InboundPolicy, sender: string): boolean {
  return policy.allowFrom.includes("*") || policy.allowFrom.includes(normaliseSender(sender));
}

/** Whether deciding about this message needs to know if the sender was approved by pairing. */
export function needsApprovalLookup(msg: InboundMessage, policy: InboundPolicy): boolean {
  const early = screen(msg, policy);
  return early === undefined && policy.dmPolicy !== "open" && !allowListed(policy, msg.sender);
}

/**
 * What to do with one message. `known` is whether the sender is allowed (allowFrom, or approved
 * by pairing). Bots never get an answer, so two bots cannot loop. `disabled` turns the account's
 * inbound side off. In a group the bot must be mentioned (unless `groups.requireMention` is
 * false) and, unless the policy is `open`, the sender must be known: pairing codes are never
 * posted into groups, where everyone would read them.
 */
export function judgeSender(msg: InboundMessage, policy: InboundPolicy, known: boolean): Verdict {
  const early = screen(msg, policy);
  if (early !== undefined) return early;
  if (policy.dmPolicy === "open" || known) return { kind: "answer" };
  if (msg.chatType === "group") return { kind: "ignore", reason: "the sender is not allowed in groups" };
  if (policy.dmPolicy === "pairing") return { kind: "pair" };
  return { kind: "ignore", reason: "the sender is not on the allowlist" };
}

/** The refusals that do not depend on who the sender is. */
function screen(msg: InboundMessage, policy: InboundPolicy): Verdict | undefined {
  if (msg.fromBot) return { kind: "ignore", reason: "written by a bot" };
  if (policy.dmPolicy === "disabled") return { kind: "ignore", reason: "inbound messages are disabled for this account" };
  if (msg.text.trim() === "" && (msg.attachments?.length ?? 0) === 0) return { kind: "ignore", reason: "an empty message" };
  if (msg.chatType === "group" && policy.requireMention && !msg.mentioned) {
    return { kind: "ignore", reason: "a group message that does not mention the bot" };
  }
  return undefined;
}
