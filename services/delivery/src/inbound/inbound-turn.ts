import type { DeliverySendRequest } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { ChannelAccount, ChannelDirectory } from "../channel-directory.js";
import type { Dispatcher } from "../dispatcher.js";
import { isTransient, type Outbox } from "../outbox.js";
import type { StatusBook } from "../status-book.js";
import type { AgentTurns } from "./agent-turns.js";
import type { AnsweredEvents } from "./answered-events.js";
import { eventKeyOf, turnText } from "./conversation.js";
import type { QueueRead, QueuedMessage } from "./inbound-store.js";
import type { PairingBook, PairingEntry } from "./pairing-book.js";
import { allowListed, judgeSender, needsApprovalLookup } from "./sender-policy.js";
import { startTyping } from "./typing.js";

export interface InboundTurnDeps {
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
      const policy = account.inbound;
      const known = needsApprovalLookup(msg, policy) ? await this.deps.pairing.isApproved(origin, msg.sender) : allowListed(policy, msg.sender);
      const verdict = judgeSender(msg, policy, known);
      if (verdict.kind === "ignore") {
        this.deps.logger.debug({ eventKey, reason: verdict.reason }, "inbound message not answered");
        return;
      }
      if (verdict.kind === "pair") {
        const { entry, notify } = await this.deps.pairing.request(origin, msg);
        if (notify) await this.answer(account, eventKey, msg.chat, msg.threadId, pairingText(entry));
        return;
      }
      const stopTyping = startTyping(account.adapter, msg.chat, msg.threadId, this.deps.logger);
      try {
        answer = await this.run(account, read, msg, eventKey);
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

  /** The agent's answer, or undefined when there is none to send (the run failed or said nothing). */
  private async run(account: ChannelAccount, read: QueueRead, msg: QueuedMessage["message"], eventKey: string): Promise<string | undefined> {
    const record = await this.deps.turns.run({
      runId: eventKey,
      sessionKey: read.queue.sessionKey,
      agentId: account.inbound.agent ?? "",
      message: turnText(msg),
      sender: msg.senderName ?? msg.sender,
    });
    if (record.state === "error") {
      const why = `${record.error?.code ?? "INTERNAL"}: ${record.error?.message ?? "the run failed"}`;
      this.deps.logger.warn({ eventKey, error: why }, "the agent's run for an inbound message failed; no answer");
      this.deps.status.inboundFailure(account.channelId, account.accountId, `run ${eventKey} failed: ${why}`);
      return undefined;
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

function pairingText(entry: PairingEntry): string {
  const minutes = Math.max(1, Math.round((entry.expiresAt - Date.now()) / 60_000));
  return (
    `This bot answers only people its operator has approved. Your pairing code is ${entry.code}. ` +
    `Send it to the operator; it is valid for ${minutes} minutes.`
  );
}
