import type { InboundMessage } from "@gw/channels";
import type { Binding } from "@gw/config";
import type { DeliverySendRequest } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { ChannelAccount, ChannelDirectory } from "../channel-directory.js";
import type { Dispatcher } from "../dispatcher.js";
import { isTransient, type Outbox } from "../outbox.js";
import type { StatusBook } from "../status-book.js";
import type { AgentTurns } from "./agent-turns.js";
import type { AnsweredEvents } from "./answered-events.js";
import { eventKeyOf, turnText } from "./conversation.js";
import { type InboundRoute, routeOf } from "./inbound-route.js";
import type { QueueRead, QueuedMessage } from "./inbound-store.js";
import type { PairingBook, PairingEntry } from "./sender-approval-book.js";
import { allowListed, judgeSender, needsApprovalLookup, type Verdict } from "./sender-policy.js";
import type { InboundOrigin } from "./sink.js";
import { startTyping } from "./typing.js";

/** What the sender is told when the run fails (delivery.inbound.failureReply / timeoutReply; "" for nothing). */
export interface FailureReplies {
  failureReply: string;
  timeoutReply: string;
}

export interface InboundTurnDeps {
  replies: FailureReplies;
  /** The config's routing bindings: which agent answers which chats. */
  bindings: readonly Binding[];
  /** agents.default: the agent a route without one names, for channels.status. */
  defaultAgent: string;
  answered: AnsweredEvents;
  pairing: PairingBook;
  turns: AgentTurns;
  directory: ChannelDirectory;
  dispatcher: Dispatcher;
  outbox: Outbox;
  status: StatusBook;
  logger: Logger;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * One stored message's turn (DESIGN §9 inbound-router: event -> session -> run -> answer): the
 * sender policy, then a pairing code, nothing, or the agent's run and its answer in the same
 * chat and thread. The run's id and the answer's idempotency key are the event's key, so a
 * turn taken up again after a crash follows the run it started and sends the answer once. The
 * answer is stored with the message before it is sent, so a replay sends it without running
 * the agent again. Failures of the turn itself (the run failed, the platform refused the answer)
 * are recorded in channels.status and end the turn; failures of the gateway's own machinery
 * (store, bus) propagate, and the message stays queued for another try.
 */
export class InboundTurn {
  constructor(private readonly deps: InboundTurnDeps) {}

  async take(read: QueueRead, item: QueuedMessage): Promise<void> {
    const { queue } = read;
    const msg = item.message;
    const origin = { channelId: queue.channelId, accountId: queue.accountId };
    const eventKey = eventKeyOf(origin, msg.eventId);
    const account = this.deps.directory.account(origin.channelId, origin.accountId);
    if (account === undefined || account.accountId !== origin.accountId) {
      this.deps.logger.warn({ eventKey }, "an inbound message for an account no longer configured is dropped");
      return;
    }
    let answer = await this.deps.answered.answerOf(eventKey);
    if (answer === undefined) {
      const route = routeOf(this.deps.bindings, account, msg);
      const verdict = await this.verdict(route, origin, msg);
      if (verdict.kind === "ignore") {
        this.deps.logger.debug({ eventKey, reason: verdict.reason }, "inbound message not answered");
        return;
      }
      if (verdict.kind === "pair") {
        const { entry, notify } = await this.deps.pairing.request(origin, msg);
        if (notify) await this.answer(account, eventKey, msg.chat, msg.threadId, pairingText(entry));
        return;
      }
      this.deps.status.routed(account.channelId, account.accountId, {
        chat: msg.chat,
        threadId: msg.threadId ?? "",
        agentId: route.agentId || this.deps.defaultAgent,
        binding: route.binding ?? -1,
        at: Date.now(),
      });
      const stopTyping = startTyping(account.adapter, msg.chat, msg.threadId, this.deps.logger, msg.eventId);
      try {
        answer = await this.run(account, route, read, msg, eventKey);
        if (answer === undefined) return;
        await this.deps.answered.keepAnswer(eventKey, answer);
        await this.answer(account, eventKey, msg.chat, msg.threadId, answer);
      } finally {
        stopTyping();
      }
      return;
    }
    await this.answer(account, eventKey, msg.chat, msg.threadId, answer);
  }

  /**
   * A message dropped after its turn kept failing on the gateway's side: a sender the agent
   * would have answered is told (`failureReply`), best effort, once (the event's key), since
   * the gateway may still be down.
   */
  async giveUp(read: QueueRead, item: QueuedMessage): Promise<void> {
    const origin = { channelId: read.queue.channelId, accountId: read.queue.accountId };
    const msg = item.message;
    const account = this.deps.directory.account(origin.channelId, origin.accountId);
    const text = failureReply("INTERNAL", this.deps.replies);
    if (account === undefined || account.accountId !== origin.accountId || text === "") return;
    try {
      if ((await this.verdict(routeOf(this.deps.bindings, account, msg), origin, msg)).kind !== "answer") return;
      await this.answer(account, eventKeyOf(origin, msg.eventId), msg.chat, msg.threadId, text);
    } catch (err) {
      this.deps.logger.warn({ err: errorText(err), channel: origin.channelId }, "cannot tell the sender of a dropped message");
    }
  }

  /** The sender policy of the message's route: the account's, or its binding's dmPolicy. */
  private async verdict(route: InboundRoute, origin: InboundOrigin, msg: InboundMessage): Promise<Verdict> {
    const { policy } = route;
    const known = needsApprovalLookup(msg, policy) ? await this.deps.pairing.isApproved(origin, msg.sender) : allowListed(policy, msg.sender);
    return judgeSender(msg, policy, known);
  }

  /**
   * The agent's answer; for a failed run, the configured short reply (the failure is logged and
   * in channels.status); undefined when there is nothing to send (the run said nothing, it was
   * aborted, or the reply is configured empty).
   */
  private async run(
    account: ChannelAccount,
    route: InboundRoute,
    read: QueueRead,
    msg: QueuedMessage["message"],
    eventKey: string,
  ): Promise<string | undefined> {
    const record = await this.deps.turns.run({
      runId: eventKey,
      sessionKey: read.queue.sessionKey,
      agentId: route.agentId,
      message: turnText(msg),
      sender: msg.senderName ?? msg.sender,
    });
    if (record.state === "error") {
      const code = record.error?.code ?? "INTERNAL";
      const why = `${code}: ${record.error?.message ?? "the run failed"}`;
      const reply = failureReply(code, this.deps.replies);
      this.deps.logger.warn({ eventKey, error: why, replied: reply !== "" }, "the agent's run for an inbound message failed");
      this.deps.status.inboundFailure(account.channelId, account.accountId, `run ${eventKey} failed: ${why}`);
      return reply === "" ? undefined : reply;
    }
    const text = (record.payloads ?? []).map((p) => p.text).join("\n\n");
    return text.trim() === "" ? undefined : text;
  }

  /**
   * Sends through the dispatcher (ordered, paced, chunked, once per key). A send that fails for
   * a reason time can fix goes to the durable outbox with the same key, which keeps trying; the
   * session moves on meanwhile.
   */
  private async answer(account: ChannelAccount, eventKey: string, chat: string, threadId: string | undefined, text: string): Promise<void> {
    const request: DeliverySendRequest = {
      channel: account.channelId,
      accountId: account.accountId,
      to: chat,
      text,
      mediaUrls: [],
      gifPlayback: false,
      threadId: threadId ?? "",
      sessionKey: "",
      idempotencyKey: eventKey,
    };
    try {
      await this.deps.dispatcher.send(request);
    } catch (err) {
      const transient = isTransient(err);
      this.deps.status.inboundFailure(account.channelId, account.accountId, `cannot answer ${eventKey}: ${errorText(err)}`);
      this.deps.logger.warn({ eventKey, err: errorText(err), retried: transient }, "cannot send the answer to an inbound message");
      if (transient) await this.deps.outbox.enqueue(request, `inbound:${eventKey}`);
    }
  }
}

/** An operator's abort is deliberate and gets no reply; a timeout says so; anything else is a failure. */
export function failureReply(code: string, replies: FailureReplies): string {
  if (code === "ABORTED") return "";
  return (code === "TIMEOUT" ? replies.timeoutReply : replies.failureReply).trim();
}

function pairingText(entry: PairingEntry): string {
  const minutes = Math.max(1, Math.round((entry.expiresAt - Date.now()) / 60_000));
  return (
    `This bot answers only people its operator has approved. Your pairing code is ${entry.code}. ` +
    `Send it to the operator; it is valid for ${minutes} minutes.`
  );
}
