import { GATEWAY_VERSION } from "@gw/contracts";
import { Command, CommanderError } from "commander";
import { registerAgentCommands } from "./commands/agents.js";
import { registerChannelCommands } from "./commands/channels.js";
import { registerConfigCommands } from "./commands/config.js";
import { registerCronCommands } from "./commands/cron.js";
import { registerDeviceCommands } from "./commands/devices.js";
import { registerHealthCommands } from "./commands/health.js";
import { registerModelCommands } from "./commands/models.js";
import { registerRunCommands } from "./commands/runs.js";
import { registerSendCommands } from "./commands/send.js";
import { registerSessionCommands } from "./commands/sessions.js";
import { registerStartCommand } from "./commands/start.js";
import { registerToolCommands } from "./commands/tools.js";
import { type CliIo, outputFor } from "./context.js";
import { EXIT, exitCodeOf } from "./exit-codes.js";
import { examples } from "./help.js";

export function buildProgram(io: CliIo): Command {
  const program = new Command("gateway")
    .description("Run the agent gateway, and operate a running one over its WebSocket protocol.")
    .version(GATEWAY_VERSION, "--version", "print the version")
    .option("--url <url>", "the gateway's address, ws(s):// or http(s):// (else GATEWAY_URL, else the config's, else ws://127.0.0.1:18789)")
    .option("--token <token>", "the gateway token (else GATEWAY_TOKEN, else the config's)")
    .option("--password <password>", "the gateway password (else GATEWAY_PASSWORD, else the config's)")
    .option("-c, --config <file>", "a local gateway's config file (else GATEWAY_CONFIG)")
    .option("--json", "print the result as one JSON document on stdout")
    // Set before the commands are added: subcommands inherit them.
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError("(add --help for usage)");
  examples(program, "gateway start", "gateway status", 'gateway agent --message "hello"', "gateway pairing approve telegram ABCD-EFGH");
  program.addHelpText(
    "after",
    "\nExit codes: 0 ok, 1 the gateway refused (its error code is printed), 2 usage, 3 unreachable, 4 authentication, 130 interrupted.\n",
  );
  registerStartCommand(program, io);
  registerHealthCommands(program, io);
  registerAgentCommands(program, io);
  registerRunCommands(program, io);
  registerModelCommands(program, io);
  registerToolCommands(program, io);
  registerSessionCommands(program, io);
  registerSendCommands(program, io);
  registerChannelCommands(program, io);
  registerCronCommands(program, io);
  registerDeviceCommands(program, io);
  registerConfigCommands(program, io);
  return program;
}

/**
 * Runs one command line; resolves with the exit code, or -1 when it started a server that
 * exits through its own graceful shutdown.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  if (argv.length === 0) {
    program.outputHelp({ error: true });
    return EXIT.usage;
  }
  try {
    await program.parseAsync(argv, { from: "user" });
    return io.outcome.serving ? -1 : io.outcome.exitCode;
  } catch (err) {
    // Commander printed its message already (help and version are exit code 0).
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const code = exitCodeOf(err);
    outputFor(io, argv.includes("--json")).error(err, code);
    return code;
  }
}
