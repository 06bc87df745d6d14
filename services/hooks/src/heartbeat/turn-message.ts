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
 * What a heartbeat turn reads, as its user message: one line per queued event, oldest first,
 * with when and from where it came.
 *
 *   Heartbeat: 2 system events since the last heartbeat, oldest first.
 *   [2026-11-23T10:00:00.000Z] wake: Build 41 failed
 *   [2026-11-23T10:02:00.000Z] hooks/github: Issue "Login fails" was opened
 */
export function turnMessage(events: readonly WakeEvent[]): string {
  const lines = events.map((event) => `[${new Date(event.at).toISOString()}] ${event.source}: ${clip(event.text)}`);
  const count = `${events.length} system event${events.length === 1 ? "" : "s"}`;
  return `Heartbeat: ${count} since the last heartbeat, oldest first.\n${lines.join("\n")}`;
}
