import type { Command } from "commander";
import { action, type CliIo, type CommandContext } from "../context.js";
import { table } from "../format.js";
import { examples } from "../help.js";

const seconds = (ms: number) => (ms > 0 ? `${Math.ceil(ms / 1000)} s` : "-");

/** One row per provider and key: a provider's own cooldown on its row, each key's below it. */
async function modelsStatus(ctx: CommandContext): Promise<void> {
  const answer = await (await ctx.control()).request("models.status");
  ctx.out.result(answer, () =>
    table(
      ["PROVIDER", "KIND", "KEY", "STATE", "COOLING", "FAILURES", "429s"],
      answer.providers.flatMap((p) => [
        [p.name, p.kind, "", p.state, seconds(p.coolingMs), String(p.failures), ""],
        ...p.keys.map((k) => ["", "", k.id, k.state, seconds(k.coolingMs), "", String(k.rateLimits)]),
      ]),
      "no model providers",
    ),
  );
}

export function registerModelCommands(program: Command, io: CliIo): void {
  const models = examples(program.command("models").description("the model providers and their API keys"), "gateway models status");
  examples(
    models
      .command("status")
      .description("each provider and API key (by id, never the key): ready, or cooling down and for how long, as every runner sees it")
      .action(action(io, modelsStatus)),
    "gateway models status",
    "gateway models status --json",
  );
}
