import { randomUUID } from "node:crypto";
import { type AgentAnswer, GatewayRpcError, payloadText } from "@gw/client";
import { type Command, Option } from "commander";
import { action, type CliIo, type CommandContext } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { table, truncate } from "../format.js";
import { examples } from "../help.js";
import { RunPrinter } from "../run-printer.js";
import { positiveNumber } from "./values.js";

/** After Ctrl-C: how long the abort and the run's end may take before the CLI leaves anyway. */
const ABORT_WAIT_MS = 5_000;

async function listAgents(ctx: CommandContext): Promise<void> {
  const answer = await (await ctx.control()).request("agents.list");
  ctx.out.result(answer, () =>
    table(
      ["ID", "NAME", "MODEL", "DEFAULT", "DESCRIPTION"],
      answer.agents.map((a) => [a.id, a.name, a.model, a.id === answer.defaultAgentId ? "yes" : "", truncate(a.description, 60)]),
    ),
  );
}

async function showAgent(ctx: CommandContext, agentId: string | undefined): Promise<void> {
  const answer = await (await ctx.control()).request(
    "agent.identity.get",
    agentId === undefined ? {} : { agentId },
  );
  ctx.out.result(answer, () => [`${ctx.out.paint("bold", answer.name)} (${answer.id})`, answer.description, answer.avatar ? `avatar: ${answer.avatar}` : ""].filter((l) => l !== "").join("\n"));
}

interface AgentOptions {
  message: string;
  session: string;
  agent?: string;
  model?: string;
  thinking?: string;
  deliver?: boolean;
  channel?: string;
  to?: string;
  runId?: string;
  timeout?: number;
}

function agentParams(o: AgentOptions, runId: string): Record<string, unknown> {
  return {
    message: o.message,
    sessionKey: o.session,
    runId,
    ...(o.agent === undefined ? {} : { agentId: o.agent }),
    ...(o.model === undefined ? {} : { model: o.model }),
    ...(o.thinking === undefined ? {} : { thinking: o.thinking }),
    ...(o.deliver ? { deliver: true } : {}),
    ...(o.channel === undefined ? {} : { messageChannel: o.channel }),
    ...(o.to === undefined ? {} : { to: o.to }),
    ...(o.timeout === undefined ? {} : { timeoutSeconds: o.timeout }),
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Runs an agent and streams its answer as it is written, tool calls included. Ctrl-C aborts the
 * run (`chat.abort`) and exits 130.
 */
async function runAgent(ctx: CommandContext): Promise<void> {
  const o = ctx.opts as unknown as AgentOptions;
  const client = await ctx.control();
  const runId = o.runId ?? randomUUID();
  const printer = new RunPrinter(ctx.out, runId);
  const stopEvents = client.onEvent((event, payload) => printer.take(event, payload));
  let stopInterrupt = () => {};
  const interrupted = new Promise<"interrupted">((resolve) => {
    stopInterrupt = ctx.io.onInterrupt(() => resolve("interrupted"));
  });
  ctx.out.note(ctx.out.paint("dim", `run ${runId} on session ${o.session}`));
  const answer = client.request("agent", agentParams(o, runId), { timeoutMs: 0 });
  try {
    const first = await Promise.race([answer.then((value) => ({ value }), (error: unknown) => ({ error })), interrupted]);
    if (first === "interrupted") return await abortRun(ctx, runId, answer, printer);
    if ("error" in first) throw first.error;
    const text = payloadText(first.value.payloads);
    // Builtin models answer without streaming: then the answer is printed whole.
    if (printer.text === "" && text !== "") ctx.out.stream(`${text}\n`);
    ctx.out.result({ runId, sessionKey: o.session, payloads: first.value.payloads, tools: printer.tools }, () => "");
  } finally {
    stopEvents();
    stopInterrupt();
  }
}

async function abortRun(ctx: CommandContext, runId: string, answer: Promise<AgentAnswer>, printer: RunPrinter): Promise<void> {
  ctx.out.note(`\ninterrupted: aborting run ${runId}`);
  const client = await ctx.control();
  const aborted = await client.request("chat.abort", { runId }, { timeoutMs: ABORT_WAIT_MS }).catch((err: unknown) => {
    ctx.out.note(`could not abort run ${runId}: ${(err as Error).message}`);
    return { aborted: false };
  });
  // The run's answer (ABORTED) comes once the runner stopped; leave after a bounded wait either way.
  const outcome = await Promise.race([answer.then(() => "ended", (err: unknown) => (err instanceof GatewayRpcError ? err.code : "failed")), sleep(ABORT_WAIT_MS).then(() => "still running")]);
  ctx.io.outcome.exitCode = EXIT.interrupted;
  if (ctx.out.json) ctx.out.result({ runId, aborted: aborted.aborted, outcome, tools: printer.tools }, () => "");
}

export function registerAgentCommands(program: Command, io: CliIo): void {
  const agents = examples(program.command("agents").description("the configured agents"), "gateway agents list");
  examples(agents.command("list").description("the configured agents and which is the default").action(action(io, listAgents)), "gateway agents list");
  examples(
    agents.command("show").description("one agent's name, description and avatar (the default agent without an id)").argument("[agentId]", "the agent").action(action(io, showAgent)),
    "gateway agents show",
    "gateway agents show ops --json",
  );
  examples(
    program
      .command("agent")
      .description("run an agent and stream its answer as it is written, tool calls included; Ctrl-C aborts the run (exit 130)")
      .requiredOption("-m, --message <text>", "what to say to the agent")
      .option("-s, --session <key>", "the session to run on", "cli:main")
      .option("-a, --agent <id>", "the agent (else the session's, else the default agent)")
      .option("--model <ref>", "a model for this run (provider/model)")
      .addOption(new Option("--thinking <level>", "thinking level").choices(["low", "medium", "high", "extended"]))
      .option("--deliver", "send the answer through a channel too")
      .option("--channel <id>", "the channel to deliver on (with --deliver)")
      .option("--to <recipient>", "the recipient to deliver to (with --deliver)")
      .option("--run-id <id>", "the run's id (else one is generated and printed on stderr)")
      .option("--timeout <seconds>", "stop the run after this long", positiveNumber)
      .action(action(io, runAgent)),
    'gateway agent --message "hello"',
    'gateway agent -m "what time is it?" --agent ops --session cli:ops',
    'gateway agent -m "status report" --deliver --channel telegram --to @ops --json',
  );
}
