import { type Command, Option } from "commander";
import { action, type CliIo, type CommandContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { relativeTime, table, truncate } from "../format.js";
import { examples } from "../help.js";
import { count } from "./values.js";


async function listSessions(ctx: CommandContext): Promise<void> {
  const o = ctx.opts as { agent?: string; limit?: number; offset?: number };
  const params = { ...(o.agent ? { agentId: o.agent } : {}), ...(o.limit === undefined ? {} : { limit: o.limit }), ...(o.offset === undefined ? {} : { offset: o.offset }) };
  const answer = await (await ctx.control()).request("sessions.list", params);
  ctx.out.result(answer, () => {
    const rows = answer.sessions.map((s) => [s.key, s.agentId, s.model, String(s.messageCount), relativeTime(s.updatedAt), relativeTime(s.createdAt)]);
    const shown = answer.sessions.length === 0 ? "" : `\n${ctx.out.paint("dim", `${(o.offset ?? 0) + 1}-${(o.offset ?? 0) + answer.sessions.length} of ${answer.total}`)}`;
    return `${table(["KEY", "AGENT", "MODEL", "MESSAGES", "UPDATED", "CREATED"], rows, `no sessions (${answer.total} in all)`)}${shown}`;
  });
}

async function previewSession(ctx: CommandContext, key: string): Promise<void> {
  const limit = ctx.opts.limit as number | undefined;
  const answer = await (await ctx.control()).request("sessions.preview", { key, ...(limit === undefined ? {} : { limit }) });
  ctx.out.result(answer, () => {
    const head = `${ctx.out.paint("bold", answer.key)}  agent ${answer.agentId}, model ${answer.model}, updated ${relativeTime(answer.updatedAt)}`;
    // Newest first on the wire; a conversation reads oldest first.
    const lines = [...answer.messages].reverse().map((m) => {
      const images = (m.attachments ?? []).map((a) => ctx.out.paint("dim", ` [image: ${a.mimeType}, ${a.url ?? `${a.size ?? 0} bytes`}]`)).join("");
      return `${ctx.out.paint("dim", relativeTime(m.timestamp).padEnd(9))} ${ctx.out.paint(m.role === "user" ? "cyan" : "green", `${m.sender || m.role}:`)} ${truncate(m.body, 200)}${images}`;
    });
    return [head, ...(lines.length === 0 ? ["(no messages)"] : lines)].join("\n");
  });
}

async function patchSession(ctx: CommandContext, key: string): Promise<void> {
  const o = ctx.opts as { agent?: string; model?: string; thinking?: string };
  if (o.agent === undefined && o.model === undefined && o.thinking === undefined) {
    throw new CliError(EXIT.usage, "USAGE", "give at least one of --agent, --model, --thinking");
  }
  const params = { key, ...(o.agent ? { agentId: o.agent } : {}), ...(o.model ? { model: o.model } : {}), ...(o.thinking ? { thinking: o.thinking } : {}) };
  const answer = await (await ctx.control()).request("sessions.patch", params);
  ctx.out.result({ key, ...answer }, () => (answer.updated ? `updated ${key}` : `${key}: nothing changed`));
}

/** Asks before a change that loses history, when a person is there to answer and --yes was not given. */
async function confirmed(ctx: CommandContext, question: string): Promise<boolean> {
  if (ctx.opts.yes === true || !ctx.io.interactive) return true;
  return ctx.io.confirm(question);
}

function destructive(method: "sessions.reset" | "sessions.delete", verb: string) {
  return async (ctx: CommandContext, key: string): Promise<void> => {
    if (!(await confirmed(ctx, `${verb} session ${key}? This cannot be undone. [y/N] `))) {
      ctx.out.note("cancelled; nothing changed");
      ctx.io.outcome.exitCode = EXIT.refused;
      return;
    }
    const answer = await (await ctx.control()).request(method, { key });
    ctx.out.result({ key, ...answer }, () => `${verb === "Reset" ? "reset" : "deleted"} ${key}`);
  };
}

async function compactSession(ctx: CommandContext, key: string): Promise<void> {
  const answer = await (await ctx.control()).request("sessions.compact", { key });
  ctx.out.result({ key, ...answer }, () =>
    answer.compacted ? `compacted ${key}: ${answer.beforeSize} -> ${answer.afterSize} bytes` : `${key}: nothing to compact (${answer.beforeSize} bytes)`,
  );
}

export function registerSessionCommands(program: Command, io: CliIo): void {
  const sessions = examples(program.command("sessions").description("list, read and change sessions"), "gateway sessions list", "gateway sessions preview cli:main");
  examples(
    sessions
      .command("list")
      .description("sessions, newest first, a page at a time")
      .option("-a, --agent <id>", "only this agent's sessions")
      .option("--limit <n>", "page size (default 50)", count)
      .option("--offset <n>", "skip this many (default 0)", count)
      .action(action(io, listSessions)),
    "gateway sessions list",
    "gateway sessions list --agent main --limit 20 --offset 20 --json",
  );
  examples(
    sessions.command("preview").description("a session's settings and newest messages").argument("<key>", "the session key").option("--limit <n>", "messages to show (default 20)", count).action(action(io, previewSession)),
    "gateway sessions preview cli:main --limit 5",
  );
  examples(
    sessions
      .command("patch")
      .description("change a session's agent, model or thinking level")
      .argument("<key>", "the session key")
      .option("-a, --agent <id>", "bind the session to this agent")
      .option("--model <ref>", "use this model (provider/model)")
      .addOption(new Option("--thinking <level>", "thinking level").choices(["low", "medium", "high"]))
      .action(action(io, patchSession)),
    "gateway sessions patch cli:main --agent ops --thinking high",
  );
  for (const [name, method, verb] of [
    ["reset", "sessions.reset", "Reset"],
    ["delete", "sessions.delete", "Delete"],
  ] as const) {
    examples(
      sessions
        .command(name)
        .description(name === "reset" ? "clear a session's history (asks first on a terminal)" : "remove a session and its history (asks first on a terminal)")
        .argument("<key>", "the session key")
        .option("-y, --yes", "do not ask")
        .action(action(io, destructive(method, verb))),
      `gateway sessions ${name} cli:main`,
      `gateway sessions ${name} cli:main --yes`,
    );
  }
  examples(sessions.command("compact").description("replace older history with a summary").argument("<key>", "the session key").action(action(io, compactSession)), "gateway sessions compact cli:main");
}
