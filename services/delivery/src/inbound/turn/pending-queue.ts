import type { QueueSettings } from "@gw/config";
import type { InboxEntry } from "@gw/contracts";
import { eventKeyOf, turnText } from "../store/conversation.js";
import type { QueuedMessage, SessionQueue } from "../store/inbound-store.js";

/**
 * The queue modes' bookkeeping on a session's stored messages (issue 26 §1), pure: each function
 * takes the record as read and answers the record to write (compare-and-set by the caller).
 * A turn's messages carry its run id (`turn`) from before the run starts until the turn is over,
 * so a replica taking the session over after a crash takes up exactly that turn; they are always
 * the first messages of the record. A message handed to the running turn (steer) carries that
 * run's id as `steer` until the run's record says whether it read it.
 */

/** One turn: its run id and the messages it answers, oldest first. */
export interface PlannedTurn {
  runId: string;
  items: QueuedMessage[];
}

/**
 * The run id of a turn starting with `head`: the event's key (so today's one-message turns keep
 * their ids), with the number of times the message's turns were interrupted after it.
 */
export function turnRunId(queue: SessionQueue, head: QueuedMessage): string {
  const key = eventKeyOf({ channelId: queue.channelId, accountId: queue.accountId }, head.message.eventId);
  return head.tries === undefined || head.tries === 0 ? key : `${key}~${head.tries}`;
}

/** The turn already under way (its messages tagged), if any. */
export function runningTurn(queue: SessionQueue): PlannedTurn | undefined {
  const runId = queue.items[0]?.turn;
  if (runId === undefined) return undefined;
  return { runId, items: queue.items.filter((item) => item.turn === runId) };
}

/**
 * The next turn when none is under way: the first message alone (followup), or every message
 * waiting (the other modes). `tagged` is the record with the turn's messages tagged; undefined
 * for followup, which needs no tag (its turn is one message, named by its event).
 */
export function planTurn(queue: SessionQueue, mode: QueueSettings["mode"]): { turn: PlannedTurn; tagged?: SessionQueue } | undefined {
  const head = queue.items[0];
  if (head === undefined) return undefined;
  const runId = turnRunId(queue, head);
  if (mode === "followup") return { turn: { runId, items: [head] } };
  const items = queue.items.map((item) => (item.turn === undefined ? { ...item, turn: runId, steer: undefined } : item));
  return { turn: { runId, items: items.filter((item) => item.turn === runId) }, tagged: { ...queue, items } };
}

/** Messages waiting behind a running turn that nobody handed it yet. */
export function untouched(queue: SessionQueue): QueuedMessage[] {
  return queue.items.filter((item) => item.turn === undefined && item.steer === undefined);
}

/**
 * Hands the untouched messages to the running turn `runId` (steer), up to the first that carries
 * a file: a run's inbox takes text, so a photo waits for a turn of its own (where it is fetched,
 * checked and given to the agent as an image), and the messages after it wait too, in order.
 * Undefined when there is nothing to hand.
 */
export function markSteer(queue: SessionQueue, runId: string): SessionQueue | undefined {
  if (queue.items[0]?.turn !== runId) return undefined;
  let open = true;
  let handed = 0;
  const items = queue.items.map((item) => {
    if (item.turn !== undefined || item.steer !== undefined) return item;
    open &&= (item.message.attachments?.length ?? 0) === 0;
    if (!open) return item;
    handed++;
    return { ...item, steer: runId };
  });
  return handed === 0 ? undefined : { ...queue, items };
}

/** Marks the running turn `runId` as stopped for newer messages (interrupt); undefined when already so or over. */
export function markInterrupt(queue: SessionQueue, runId: string): SessionQueue | undefined {
  if (queue.items[0]?.turn !== runId || queue.interrupt === runId || untouched(queue).length === 0) return undefined;
  return { ...queue, interrupt: runId };
}

export interface TurnEnd {
  runId: string;
  /** The turn's own messages. */
  eventIds: readonly string[];
  /** Messages handed to the run that its record says it read. */
  steered: ReadonlySet<string>;
  /** The run was aborted for an interrupt: its messages wait for the next turn. */
  interrupted: boolean;
}

/**
 * The record once a turn is over: its messages and those its run read go; the ones handed to it
 * too late wait for the next turn. An interrupted turn's messages stay too, in front, counted,
 * so the next turn gets a run id of its own.
 */
export function endTurn(queue: SessionQueue, end: TurnEnd): SessionQueue | undefined {
  const own = new Set(end.eventIds);
  let changed = queue.interrupt === end.runId;
  const items: QueuedMessage[] = [];
  for (const item of queue.items) {
    const id = item.message.eventId;
    if (own.has(id) && end.interrupted) {
      items.push({ ...item, turn: undefined, tries: (item.tries ?? 0) + 1 });
      changed = true;
    } else if (own.has(id) || (item.steer === end.runId && end.steered.has(id) && !end.interrupted)) {
      changed = true;
    } else if (item.steer === end.runId) {
      items.push({ ...item, steer: undefined });
      changed = true;
    } else items.push(item);
  }
  if (!changed) return undefined;
  const { interrupt, ...rest } = queue;
  return { ...rest, items, ...(interrupt === undefined || interrupt === end.runId ? {} : { interrupt }) };
}

/** What one turn gives the model: the newest `cap` texts, and what happens to the older ones. */
export interface TurnInput<T> {
  /** Left out of the input, stored in the session before it. */
  left: T[];
  /** The input's messages, oldest first. */
  input: T[];
  /** For `drop: summarize`, the note that stands for `left` at the input's start. */
  note?: string;
}

/** Splits a collected turn's messages by the queue's cap; a turn within the cap is all input. */
export function capTurn<T>(items: readonly T[], queue: Pick<QueueSettings, "cap" | "drop">, textOf: (item: T) => string): TurnInput<T> {
  if (items.length <= queue.cap) return { left: [], input: [...items] };
  const left = items.slice(0, items.length - queue.cap);
  const input = items.slice(items.length - queue.cap);
  return queue.drop === "summarize" ? { left, input, note: summaryNote(left.map(textOf)) } : { left, input };
}

/** Words of each left-out message the note quotes. */
const NOTE_WORDS = 8;

/**
 * The deterministic stand-in for messages left out of a turn: their number and the first words
 * of each, e.g. `[2 earlier messages: "where is my order"; "it was due on…"]`.
 */
export function summaryNote(texts: readonly string[]): string {
  const quoted = texts.map((text) => {
    const words = text.trim().split(/\s+/).filter(Boolean);
    const head = words.slice(0, NOTE_WORDS).join(" ");
    return JSON.stringify(words.length > NOTE_WORDS ? `${head}…` : head);
  });
  return `[${texts.length} earlier message${texts.length === 1 ? "" : "s"}: ${quoted.join("; ")}]`;
}

/** A stored message as handed to a running run (libs/runs run-inbox.ts), named by its event id. */
export function inboxEntryOf(item: QueuedMessage, kind: InboxEntry["kind"]): InboxEntry {
  const msg = item.message;
  return { id: msg.eventId, kind, text: turnText(msg), sender: msg.senderName ?? msg.sender, at: item.receivedAt };
}
