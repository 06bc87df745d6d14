import type { InboundMessage } from "@gw/channels";
import { type Binding, DEFAULT_QUEUE, type QueueSettings } from "@gw/config";
import { type DeliverySendRequest, toRunAttachment } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { ChannelAccount, ChannelDirectory } from "../../channel-directory.js";
import type { Dispatcher } from "../../outbound/dispatcher.js";
import { isTransient, type Outbox } from "../../outbound/outbox.js";
import type { StatusBook } from "../../status-book.js";
import type { AgentTurns } from "./agent-turns.js";
import type { AnsweredEvents } from "../store/answered-events.js";
import { eventKeyOf, turnText } from "../store/conversation.js";
import type { InboundMedia } from "../store/inbound-media.js";
import { type InboundRoute, routeOf } from "./inbound-route.js";
import type { QueueRead, QueuedMessage } from "../store/inbound-store.js";
import { capTurn, inboxEntryOf, type PlannedTurn } from "./pending-queue.js";
import type { PairingBook, PairingEntry } from "../pairing/sender-approval-book.js";
import { allowListed, judgeSender, needsApprovalLookup, type Verdict } from "../../sender-policy.js";
import type { InboundOrigin } from "../store/sink.js";
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
  /** Images people send, fetched for the run (inbound-media.ts). */
  media: InboundMedia;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** How a turn ended, for the session's record: what its run read of its inbox, and whether it was aborted. */
export interface TurnOutcome {
  steered: readonly string[];
  aborted: boolean;
}

const NOTHING_RAN: TurnOutcome = { steered: [], aborted: false };

/**
 * One turn of a session (DESIGN §9 inbound-router: event -> session -> run -> answer): one
 * stored message, or several collected (issue 26 §1, pending-queue.ts). Each message meets the
 * sender policy: a pairing code, nothing, or a place in the agent's run, whose answer goes to the
 * chat and thread. The run's id and the answer's idempotency key are the turn's run id, so a
 * turn taken up again after a crash follows the run it started and sends the answer once. The
 * answer is stored with the messages before it is sent, so a replay sends it without running
 * the agent again. Failures of the turn itself (the run failed, the platform refused the answer)
 * are recorded in channels.status and end the turn; failures of the gateway's own machinery
 * (store, bus) propagate, and the messages stay queued for another try.
 */
export class InboundTurn {
  constructor(private readonly deps: InboundTurnDeps) {}

  /** The queue settings of an account's message (its route's); followup for an account no longer configured. */
  queueOf(origin: InboundOrigin, msg: InboundMessage): QueueSettings {
    const account = this.deps.directory.account(origin.channelId, origin.accountId);
    if (account === undefined || account.accountId !== origin.accountId) return DEFAULT_QUEUE;
    return routeOf(this.deps.bindings, account, msg).queue;
  }

  async take(read: QueueRead, turn: PlannedTurn): Promise<TurnOutcome> {
    const { queue } = read;
    const head = turn.items[0]!.message;
    const origin = { channelId: queue.channelId, accountId: queue.accountId };
    const account = this.deps.directory.account(origin.channelId, origin.accountId);
    if (account === undefined || account.accountId !== origin.accountId) {
      this.deps.logger.warn({ runId: turn.runId }, "an inbound message for an account no longer configured is dropped");
      return NOTHING_RAN;
    }
    const kept = await this.deps.answered.answerOf(turn.runId);
    if (kept !== undefined) {
      await this.answer(account, turn.runId, head.chat, head.threadId, kept);
      return { steered: (await this.deps.turns.recorded(turn.runId))?.steered ?? [], aborted: false };
    }
    const route = routeOf(this.deps.bindings, account, head);
    const answering = await this.admit(account, route, origin, turn.items);
    const last = answering.at(-1)?.message;
    if (last === undefined) return NOTHING_RAN;
    this.deps.status.routed(account.channelId, account.accountId, {
      chat: last.chat,
      threadId: last.threadId ?? "",
      agentId: route.agentId || this.deps.defaultAgent,
      binding: route.binding ?? -1,
      at: Date.now(),
    });
    const stopTyping = startTyping(account.adapter, last.chat, last.threadId, this.deps.logger, last.eventId);
    try {
      const ran = await this.run(account, route, read, answering, turn.runId);
      if (ran.text !== undefined) await this.deps.answered.keepAnswer(turn.runId, ran.text);
      // Kept until the answer is: a turn taken up again before that dispatches the same images.
      await this.deps.media.forget(turn.runId);
      if (ran.text !== undefined) await this.answer(account, turn.runId, last.chat, last.threadId, ran.text);
      return { steered: ran.steered, aborted: ran.aborted };
    } finally {
      stopTyping();
    }
  }

  /** The turn's messages the agent answers; the others get a pairing code or nothing, each once. */
  private async admit(account: ChannelAccount, route: InboundRoute, origin: InboundOrigin, items: readonly QueuedMessage[]): Promise<QueuedMessage[]> {
    const answering: QueuedMessage[] = [];
    for (const item of items) {
      const msg = item.message;
      const eventKey = eventKeyOf(origin, msg.eventId);
      const verdict = await this.verdict(route, origin, msg);
      if (verdict.kind === "ignore") {
        this.deps.logger.debug({ eventKey, reason: verdict.reason }, "inbound message not answered");
      } else if (verdict.kind === "pair") {
        const { entry, notify } = await this.deps.pairing.request(origin, msg);
        if (notify) await this.answer(account, eventKey, msg.chat, msg.threadId, pairingText(entry));
      } else answering.push(item);
    }
    return answering;
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
   * The agent's run over the turn's messages (the newest `cap` as its input, older ones handed
   * over as context) and its answer; for a failed run, the configured short reply (the failure
   * is logged and in channels.status); no text when there is nothing to send (the run said
   * nothing, it was aborted, or the reply is configured empty).
   */
  private async run(
    account: ChannelAccount,
    route: InboundRoute,
    read: QueueRead,
    items: readonly QueuedMessage[],
    runId: string,
  ): Promise<TurnOutcome & { text?: string }> {
    const { left, input, note } = capTurn(items, route.queue, (item) => turnText(item.message));
    const media = await this.deps.media.prepare(account.adapter.inbound?.files, route.agentId, runId, input.map((item) => item.message), AbortSignal.timeout(60_000));
    if ("refusal" in media) return { steered: [], aborted: false, text: media.refusal };
    if (left.length > 0) await this.deps.turns.offer(runId, left.map((item) => inboxEntryOf(item, "context")));
    const last = input.at(-1)!.message;
    const record = await this.deps.turns.run({
      runId,
      sessionKey: read.queue.sessionKey,
      agentId: route.agentId,
      message: [...(note === undefined ? [] : [note]), ...input.map((item) => turnText(item.message, media.fetched))].join("\n\n"),
      sender: last.senderName ?? last.sender,
      attachments: media.images.map(toRunAttachment),
    });
    if (record.state === "error") {
      const code = record.error?.code ?? "INTERNAL";
      const why = `${code}: ${record.error?.message ?? "the run failed"}`;
      const reply = failureReply(code, this.deps.replies);
      this.deps.logger.warn({ runId, error: why, replied: reply !== "" }, "the agent's run for an inbound message failed");
      this.deps.status.inboundFailure(account.channelId, account.accountId, `run ${runId} failed: ${why}`);
      return { steered: [], aborted: code === "ABORTED", ...(reply === "" ? {} : { text: reply }) };
    }
    const text = (record.payloads ?? []).map((p) => p.text).join("\n\n");
    return { steered: record.steered ?? [], aborted: false, ...(text.trim() === "" ? {} : { text }) };
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
      threadId,
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
