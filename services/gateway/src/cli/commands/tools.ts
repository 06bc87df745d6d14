import type { Command } from "commander";
import { action, type CliIo, type CommandContext } from "../context.js";
import { table } from "../format.js";
import { examples } from "../help.js";

/** The built-in tools on one line, then one row per MCP server. */
async function toolsStatus(ctx: CommandContext): Promise<void> {
  const answer = await (await ctx.control()).request("tools.status");
  ctx.out.result(answer, () =>
    [
      `runner ${answer.runnerId}; built-in tools: ${answer.builtin.join(", ")}`,
      table(
        ["SERVER", "TRANSPORT", "STATE", "TOOLS", "RESTARTS", "LAST ERROR"],
        answer.mcp.map((s) => [s.id, s.transport, s.state, String(s.tools.length), String(s.restarts), s.lastError ?? ""]),
        "no MCP servers (runner.tools.mcp.servers)",
      ),
    ].join("\n"),
  );
}

export function registerToolCommands(program: Command, io: CliIo): void {
  const tools = examples(program.command("tools").description("the agents' tools: built in and from MCP servers"), "gateway tools status");
  examples(
    tools
      .command("status")
      .description("the built-in tools and each MCP server: connected or not, its tools, restarts and last error, as one runner sees them")
      .action(action(io, toolsStatus)),
    "gateway tools status",
    "gateway tools status --json",
  );
}
