/**
 * Telegram long polling (https://core.telegram.org/bots/api#getupdates), for accounts with
 * `inbound: "polling"`. The cursor is the next `offset` (last update_id + 1): Telegram forgets an
 * update only when a later getUpdates sends an offset past it, and the next call is made only
 * after delivery stored the batch and its cursor, so an update is never confirmed unstored.
 */
import type { ChannelReceiver, ReceivedBatch } from "@gw/channels";
import { z } from "zod";
import { type TelegramApi, UserSchema } from "./api.js";
import { messageOfUpdate, UpdateSchema } from "./update-message.js";

export interface TelegramPollOptions {
  /** Seconds Telegram holds an empty poll (its long-polling `timeout`). */
  pollTimeoutS: number;
  /** Updates per answer (1-100). */
  limit: number;
}

export const DEFAULT_POLL_OPTIONS: Readonly<TelegramPollOptions> = Object.freeze({ pollTimeoutS: 30, limit: 100 });

/** The HTTP deadline past the long poll: Telegram answers an empty poll when its timeout ends. */
const DEADLINE_MARGIN_MS = 10_000;

export class TelegramReceiver implements ChannelReceiver {
  constructor(
    private readonly api: TelegramApi,
    private readonly opts: TelegramPollOptions = DEFAULT_POLL_OPTIONS,
  ) {}

  async *receive(cursor: string | undefined, signal: AbortSignal): AsyncGenerator<ReceivedBatch> {
    // getUpdates is refused while a webhook is set; polling was chosen, so the webhook goes.
    await this.api.call("deleteWebhook", { drop_pending_updates: false }, z.boolean(), signal);
    const me = await this.api.call("getMe", {}, UserSchema, signal);
    let offset = offsetOf(cursor);
    while (!signal.aborted) {
      const params = {
        ...(offset === undefined ? {} : { offset }),
        timeout: this.opts.pollTimeoutS,
        limit: this.opts.limit,
        allowed_updates: ["message"],
      };
      const deadline = this.opts.pollTimeoutS * 1000 + DEADLINE_MARGIN_MS;
      const updates = await this.api.call("getUpdates", params, z.array(UpdateSchema), signal, [], deadline);
      if (updates.length === 0) continue;
      offset = Math.max(...updates.map((u) => u.update_id)) + 1;
      yield { messages: updates.flatMap((u) => messageOfUpdate(u, me) ?? []), cursor: String(offset) };
    }
  }
}

/** The stored cursor as an offset; one we did not write (not a number) starts where Telegram stands. */
function offsetOf(cursor: string | undefined): number | undefined {
  if (cursor === undefined || !/^-?\d+$/.test(cursor)) return undefined;
  return Number(cursor);
}
