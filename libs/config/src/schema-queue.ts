import { z } from "zod";

/**
 * What happens to a chat's messages that arrive while the agent is still answering (issue 26
 * §1), set per channel, account or routing binding (the most specific wins, as a whole):
 * - followup: each message is its own turn, in order;
 * - collect: those that arrived during a run are answered together in one next turn;
 * - steer: they are given to the running turn at its next model call; too late for that
 *   (the run is writing its final answer), they are collected;
 * - interrupt: the running turn is aborted (its partial answer is not sent) and one new turn
 *   takes everything pending.
 * `cap` bounds the messages one collected turn reads; `drop` says what happens to the older
 * ones: `oldest` leaves them out of the turn's input, `summarize` puts them in as one short note.
 * Either way they are stored in the session.
 */
export const QueueSchema = z.strictObject({
  mode: z.enum(["followup", "collect", "steer", "interrupt"]).default("followup"),
  cap: z.number().int().min(1).max(200).default(20),
  drop: z.enum(["oldest", "summarize"]).default("summarize"),
});
export type QueueSettings = z.output<typeof QueueSchema>;
export type QueueMode = QueueSettings["mode"];

/** Today's behaviour: one turn per message, in order. */
export const DEFAULT_QUEUE: QueueSettings = Object.freeze({ mode: "followup", cap: 20, drop: "summarize" });
