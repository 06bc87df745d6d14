import type { DevicePairRequest as PairRequest } from "@gw/client";
import type { Command } from "commander";
import { action, type CliIo, type CommandContext } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { relativeTime, table } from "../format.js";
import { examples } from "../help.js";



async function listDevices(ctx: CommandContext): Promise<void> {
  const answer = await (await ctx.control()).request("device.list");
  ctx.out.result(answer, () =>
    table(
      ["DEVICE", "NAME", "KEY", "PAIRED", "TOKEN ROTATED", "FROM"],
      answer.devices.map((d) => [d.deviceId, d.name, d.keyFingerprint ?? "-", relativeTime(d.pairedAt), relativeTime(d.rotatedAt), d.pairedFrom]),
      "no paired devices",
    ),
  );
}

function requestRow(r: PairRequest): string[] {
  return [r.requestId, r.deviceId, r.name, r.keyFingerprint ?? "-", r.clientIp, relativeTime(r.requestedAt), relativeTime(r.expiresAt)];
}
const REQUEST_HEADER = ["REQUEST", "DEVICE", "NAME", "KEY", "FROM", "ASKED", "EXPIRES"];

async function pending(ctx: CommandContext): Promise<void> {
  const client = await ctx.control();
  if (ctx.opts.watch !== true) {
    const answer = await client.request("node.pair.list");
    ctx.out.result(answer, () => table(REQUEST_HEADER, answer.requests.map(requestRow), "no pending pairing requests"));
    return;
  }
  // Listen first, then list: a request that arrives in between is shown (once) either way.
  const seen = new Set<string>();
  const show = (r: PairRequest) => {
    if (seen.has(r.requestId)) return;
    seen.add(r.requestId);
    ctx.out.jsonLine(r);
    ctx.out.stream(`${requestRow(r).join("  ")}\n`);
  };
  const closed = new Promise<void>((resolve) => client.onClose(() => resolve()));
  client.onEvent((event, payload) => {
    if (event === "node.pair.requested") show(payload as unknown as PairRequest);
  });
  const answer = await client.request("node.pair.list");
  ctx.out.stream(`${REQUEST_HEADER.join("  ")}\n`);
  for (const r of answer.requests) show(r);
  ctx.out.note("waiting for pairing requests (Ctrl-C to stop)");
  let stop = () => {};
  const interrupted = new Promise<void>((resolve) => {
    stop = ctx.io.onInterrupt(resolve);
  });
  await Promise.race([closed.then(() => "closed"), interrupted.then(() => "interrupted")]).then((why) => {
    stop();
    if (why === "closed") {
      ctx.out.note("the gateway closed the connection");
      ctx.io.outcome.exitCode = EXIT.unreachable;
    }
  });
}

async function approve(ctx: CommandContext, requestId: string): Promise<void> {
  const answer = await (await ctx.control()).request("node.pair.approve", { requestId });
  ctx.out.result(answer, () => `approved device ${answer.deviceId}: its token went to the waiting device`);
}

async function reject(ctx: CommandContext, requestId: string): Promise<void> {
  const answer = await (await ctx.control()).request("node.pair.reject", { requestId });
  ctx.out.result(answer, () => `rejected device ${answer.deviceId}`);
}

async function rotate(ctx: CommandContext, deviceId: string): Promise<void> {
  const answer = await (await ctx.control()).request("device.token.rotate", { deviceId });
  ctx.out.result(answer, () => `new token for ${answer.deviceId} (the old one is refused from now on):\n${answer.token}`);
}

async function revoke(ctx: CommandContext, deviceId: string): Promise<void> {
  const answer = await (await ctx.control()).request("device.revoke", { deviceId });
  ctx.out.result(answer, () => `revoked ${answer.deviceId}: its token is refused from now on`);
}

export function registerDeviceCommands(program: Command, io: CliIo): void {
  const devices = examples(program.command("devices").description("paired devices and pairing requests"), "gateway devices pending --watch", "gateway devices approve <requestId>");
  examples(devices.command("list").description("the paired devices").action(action(io, listDevices)), "gateway devices list");
  examples(
    devices
      .command("pending")
      .description("the pending pairing requests; with --watch, then each new one as it arrives (one JSON line each with --json)")
      .option("-w, --watch", "keep waiting and print requests as they arrive, until Ctrl-C")
      .action(action(io, pending)),
    "gateway devices pending",
    "gateway devices pending --watch",
  );
  const one = (name: string, description: string, run: (ctx: CommandContext, id: string) => Promise<void>, arg: string, example: string) =>
    examples(devices.command(name).description(description).argument(arg).action(action(io, run)), example);
  one("approve", "approve a pending request: the device gets its token", approve, "<requestId>", "gateway devices approve <requestId>");
  one("reject", "reject a pending request", reject, "<requestId>", "gateway devices reject <requestId>");
  one("rotate", "issue a device a new token (printed); the old one is refused at once", rotate, "<deviceId>", "gateway devices rotate kitchen-speaker");
  one("revoke", "forget a device; its token is refused at once", revoke, "<deviceId>", "gateway devices revoke kitchen-speaker");
}
