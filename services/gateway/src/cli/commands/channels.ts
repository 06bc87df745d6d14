import type { ChannelsStatusResult as ChannelsStatus } from "@gw/contracts";
import type { Command } from "commander";
import { action, type CliIo, type CommandContext } from "../context.js";
import { relativeTime, table, truncate } from "../format.js";
import { examples } from "../help.js";

/** Which agent answered each chat's last message, and the binding that chose it: only when any did. */
function routesTable(answer: ChannelsStatus): string {
  const rows = answer.channels.flatMap((c) =>
    c.accounts.flatMap((a) =>
      // Absent from gateways older than routing bindings.
      (a.lastRoutes ?? []).map((r) => [
        c.id,
        a.accountId,
        r.chat,
        r.threadId ?? "-",
        r.agentId,
        r.binding === null ? "channel default" : `bindings[${r.binding}]`,
        relativeTime(r.at),
      ]),
    ),
  );
  return rows.length === 0 ? "" : `\n\n${table(["CHANNEL", "ACCOUNT", "CHAT", "THREAD", "AGENT", "ROUTED BY", "LAST MESSAGE"], rows, "")}`;
}

async function channelsStatus(ctx: CommandContext): Promise<void> {
  const answer = await (await ctx.control()).request("channels.status", ctx.opts.probe ? { probe: true } : {}, { timeoutMs: 60_000 });
  ctx.out.result(answer, () => accountsTable(ctx, answer) + routesTable(answer));
}

function accountsTable(ctx: CommandContext, answer: ChannelsStatus): string {
  return table(
    ["CHANNEL", "KIND", "ACCOUNT", "IDENTITY", "REACHABLE", "LAST SUCCESS", "LAST INBOUND", "LAST ERROR"],
    answer.channels.flatMap((c) =>
      c.accounts.map((a) => [
        `${c.id}${c.default ? " (default)" : ""}`,
        c.kind,
        a.accountId,
        a.identity ?? "-",
        a.reachable ? ctx.out.paint("green", "yes") : ctx.out.paint("red", "no"),
        relativeTime(a.lastSuccessAt),
        relativeTime(a.lastInboundAt),
        truncate(a.lastError ?? a.lastInboundError ?? (a.rateLimitedUntil ? `rate limited until ${relativeTime(a.rateLimitedUntil)}` : ""), 60),
      ]),
    ),
    "no channels configured",
  );
}


async function pairingList(ctx: CommandContext): Promise<void> {
  const channel = ctx.opts.channel as string | undefined;
  const answer = await (await ctx.control()).request("channels.pairing.list", channel ? { channel } : {});
  ctx.out.result(answer, () =>
    table(
      ["CHANNEL", "ACCOUNT", "SENDER", "NAME", "CODE", "ASKED", "EXPIRES"],
      answer.requests.map((r) => [r.channel, r.accountId, r.sender, r.senderName, ctx.out.paint("bold", r.code), relativeTime(r.requestedAt), relativeTime(r.expiresAt)]),
      "nobody is waiting for approval",
    ),
  );
}

function pairingResolve(verb: "approve" | "reject") {
  return async (ctx: CommandContext, channel: string, code: string): Promise<void> => {
    const account = ctx.opts.account as string | undefined;
    const answer = await (await ctx.control()).request(`channels.pairing.${verb}`, { channel, code, ...(account ? { accountId: account } : {}) });
    ctx.out.result(answer, () =>
      verb === "approve"
        ? `approved ${answer.senderName} (${answer.sender}) on ${answer.channel}: the agent answers them from now on`
        : `rejected ${answer.senderName} (${answer.sender}) on ${answer.channel}`,
    );
  };
}

export function registerChannelCommands(program: Command, io: CliIo): void {
  const channels = examples(program.command("channels").description("the messaging channels"), "gateway channels status");
  examples(
    channels
      .command("status")
      .description("each channel and account: reachable, last success and error, rate limits, last inbound message")
      .option("--probe", "probe every account now instead of answering from the last probe")
      .action(action(io, channelsStatus)),
    "gateway channels status",
    "gateway channels status --probe --json",
  );
  const pairing = examples(program.command("pairing").description("people waiting for approval to talk to a bot (dmPolicy: pairing)"), "gateway pairing list", "gateway pairing approve telegram ABCD-EFGH");
  examples(
    pairing.command("list").description("the people waiting, with the code each was sent").option("--channel <id>", "only this channel").action(action(io, pairingList)),
    "gateway pairing list",
    "gateway pairing list --channel telegram --json",
  );
  for (const verb of ["approve", "reject"] as const) {
    examples(
      pairing
        .command(verb)
        .description(verb === "approve" ? "approve the person a code was sent to: the agent answers them from now on" : "reject the person a code was sent to: their request is dropped")
        .argument("<channel>", "the channel id")
        .argument("<code>", "the code the person passed on (any case, dash optional)")
        .option("--account <id>", "the channel's account, if several issued codes")
        .action(action(io, pairingResolve(verb))),
      `gateway pairing ${verb} telegram ABCD-EFGH`,
    );
  }
}
