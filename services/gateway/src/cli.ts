import { createInterface } from "node:readline/promises";
import type { CliIo } from "./cli/context.js";
import { EXIT } from "./cli/exit-codes.js";
import { runCli } from "./cli/program.js";

/**
 * The `gateway` command (bin/gateway.mjs, `npm start`, the image's entry point): the process's
 * streams, signals and terminal, handed to the commands in cli/.
 */
function processIo(): CliIo {
  const interruptHandlers = new Set<() => void>();
  let interrupts = 0;
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    interactive: process.stdin.isTTY === true && process.stderr.isTTY === true,
    async confirm(question) {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return /^y(es)?$/i.test((await rl.question(question)).trim());
      } finally {
        rl.close();
      }
    },
    onInterrupt(handler) {
      interruptHandlers.add(handler);
      // The first Ctrl-C goes to the command (abort the run); a second one leaves at once.
      const onSignal = () => {
        if (++interrupts > 1) process.exit(EXIT.interrupted);
        for (const h of interruptHandlers) h();
      };
      process.on("SIGINT", onSignal);
      return () => {
        interruptHandlers.delete(handler);
        process.off("SIGINT", onSignal);
      };
    },
    outcome: { exitCode: EXIT.ok, serving: false },
  };
}

runCli(process.argv.slice(2), processIo()).then(
  (code) => {
    // -1: a server is running; it exits through its graceful shutdown.
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`gateway: ${(err as Error).message ?? String(err)}\n`);
    process.exit(1);
  },
);
