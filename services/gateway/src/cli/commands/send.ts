import { randomUUID } from "node:crypto";
import type { DeliveryResult } from "@gw/contracts";
import type { Command } from "commander";
import { action, type CliIo, type CommandContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { examples } from "../help.js";
import { collect } from "./values.js";

/** The key that makes a retry safe: the caller's, else a new one that is printed so a retry can reuse it. */
function idempotencyKey(ctx: CommandContext): string {
  const given = ctx.opts.idempotencyKey as string | undefined;
  if (given !== undefined) return given;
  const key = randomUUID();
  ctx.out.note(`idempotency key: ${key}   (repeat with --idempotency-key ${key} to retry without sending twice)`);
  return key;
}

function receiptText(what: string, to: string, r: DeliveryResult): string {
  const ids = r.messageIds && r.messageIds.length > 1 ? ` (${r.messageIds.length} parts: ${r.messageIds.join(", ")})` : "";
  return `${what} to ${to}: message ${r.messageId ?? "?"}${ids}${r.cached ? " (already sent with this idempotency key; not sent again)" : ""}`;
}

async function send(ctx: CommandContext): Promise<void> {
  const o = ctx.opts as { to: string; message?: string; media?: string[]; channel?: string; account?: string; thread?: string; session?: string; gifPlayback?: boolean };
  if (o.message === undefined && (o.media ?? []).length === 0) throw new CliError(EXIT.usage, "USAGE", "give --message, --media or both");
  const key = idempotencyKey(ctx);
  const params = {
    to: o.to,
    idempotencyKey: key,
    ...(o.message === undefined ? {} : { message: o.message }),
    ...(o.media && o.media.length > 0 ? { mediaUrls: o.media } : {}),
    ...(o.channel ? { channel: o.channel } : {}),
    ...(o.account ? { accountId: o.account } : {}),
    ...(o.thread ? { threadId: o.thread } : {}),
    ...(o.session ? { sessionKey: o.session } : {}),
    ...(o.gifPlayback ? { gifPlayback: true } : {}),
  };
  const receipt = await (await ctx.control()).request("send", params, { timeoutMs: 120_000 });
  ctx.out.result({ ...receipt, idempotencyKey: key }, () => receiptText("sent", o.to, receipt));
}

async function poll(ctx: CommandContext): Promise<void> {
  const o = ctx.opts as { to: string; question: string; option?: string[]; channel?: string; account?: string; multi?: boolean; anonymous?: boolean };
  const key = idempotencyKey(ctx);
  const params = {
    to: o.to,
    question: o.question,
    options: o.option ?? [],
    idempotencyKey: key,
    ...(o.channel ? { channel: o.channel } : {}),
    ...(o.account ? { accountId: o.account } : {}),
    ...(o.multi ? { allowMultipleAnswers: true } : {}),
    ...(o.anonymous ? { anonymous: true } : {}),
  };
  const receipt = await (await ctx.control()).request("poll", params, { timeoutMs: 120_000 });
  ctx.out.result({ ...receipt, idempotencyKey: key }, () => receiptText("poll sent", o.to, receipt));
}

export function registerSendCommands(program: Command, io: CliIo): void {
  examples(
    program
      .command("send")
      .description("send text and media (by URL) to a recipient on a messaging channel")
      .requiredOption("--to <recipient>", "who gets it, in the channel's format (a chat id, @handle, E.164 number...)")
      .option("-m, --message <text>", "the text")
      .option("--media <url>", "an attachment by URL (repeat for several)", collect)
      .option("--channel <id>", "the channel (else the session key's, else channels.default)")
      .option("--account <id>", "the channel's account, for channels with several")
      .option("--thread <id>", "the thread or topic to post in")
      .option("--session <key>", "the conversation it belongs to (its prefix may name the channel)")
      .option("--gif-playback", "play a video attachment as a GIF")
      .option("--idempotency-key <key>", "repeat a send safely (else one is generated and printed)")
      .action(action(io, send)),
    'gateway send --channel telegram --to 4242 --message "deploy finished"',
    "gateway send --to @ops --media https://example.org/chart.png --idempotency-key deploy-42",
  );
  examples(
    program
      .command("poll")
      .description("send a poll on a channel that has polls")
      .requiredOption("--to <recipient>", "who gets it")
      .requiredOption("--question <text>", "the question")
      .requiredOption("--option <text>", "an answer (repeat: at least two)", collect)
      .option("--channel <id>", "the channel (else channels.default)")
      .option("--account <id>", "the channel's account")
      .option("--multi", "allow several answers")
      .option("--anonymous", "hide who voted what")
      .option("--idempotency-key <key>", "repeat a poll safely (else one is generated and printed)")
      .action(action(io, poll)),
    'gateway poll --channel telegram --to 4242 --question "Lunch?" --option Pizza --option Salad --multi',
  );
}
