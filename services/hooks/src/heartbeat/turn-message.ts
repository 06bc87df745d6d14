import type { WakeEvent } from "../queues/wake-queue.js";

/** The extra system prompt of a heartbeat turn unless hooks.heartbeat.prompt replaces it. */
export const DEFAULT_HEARTBEAT_PROMPT =
  "This turn was started by the gateway's heartbeat, not typed by a person. The message lists " +
  "system events (texts posted to the gateway's wake webhook), oldest first. Act on them where " +
  "needed and answer briefly: what you did, and anything a person should look at.";

/** One event's text is cut here in the turn, so a flood of large texts cannot make a turn no model accepts. */
export const MAX_EVENT_CHARS = 16_000;

function clip(text: string): string {
  if (text.length <= MAX_EVENT_CHARS) return text;
  return `${text.slice(0, MAX_EVENT_CHARS)}… (${text.length - MAX_EVENT_CHARS} more characters)`;
}

/**
 * Most UTF-8 bytes a turn's message takes. The run request carries it over the bus, and NATS
 * refuses a message over its max_payload (1 MiB by default): a turn that can never be queued would
 * hold the turn slot for good, retried by every beat while texts pile up. 256 KiB is what a
 * hook body (hooks.maxBodyBytes) and the `agent` method's message may carry, so with the
 * heartbeat prompt (at most 64 Ki characters) and the rest of the request it stays well under.
 */
export const MAX_TURN_MESSAGE_BYTES = 262_144;

const eventLine = (event: WakeEvent) => `[${new Date(event.at).toISOString()}] ${event.source}: ${clip(event.text)}`;
const header = (count: number) =>
  `Heartbeat: ${count} system event${count === 1 ? "" : "s"} since the last heartbeat, oldest first.`;

/**
 * What a heartbeat turn reads, as its user message: one line per queued event, oldest first,
 * with when and from where it came.
 *
 *   Heartbeat: 2 system events since the last heartbeat, oldest first.
 *   [2026-11-23T10:00:00.000Z] wake: Build 41 failed
 *   [2026-11-23T10:02:00.000Z] hooks/github: Issue "Login fails" was opened
 */
export function turnMessage(events: readonly WakeEvent[]): string {
  return [header(events.length), ...events.map(eventLine)].join("\n");
}

/**
 * How many of `events`, oldest first, one turn takes: as many as fit in `maxBytes` of message
 * (turnMessage's UTF-8), and always the first (a clipped text is far below the limit), so the
 * queue moves on every turn. The rest wait for the next turn, in order.
 */
export function eventsForTurn(events: readonly WakeEvent[], maxBytes = MAX_TURN_MESSAGE_BYTES): number {
  let lines = 0;
  for (const [i, event] of events.entries()) {
    lines += 1 + Buffer.byteLength(eventLine(event), "utf8");
    if (i > 0 && Buffer.byteLength(header(i + 1), "utf8") + lines > maxBytes) return i;
  }
  return events.length;
}
