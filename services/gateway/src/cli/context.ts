import type { GatewayClient } from "@gw/client";
import type { Command } from "commander";
import { connectControl, resolveTarget, type Target } from "./connection.js";
import { colourWanted } from "./format.js";
import { Output, type Writer } from "./output.js";

/** The options every command takes (program.ts), as commander hands them over. */
export interface GlobalOptions {
  url?: string;
  token?: string;
  password?: string;
  config?: string;
  json?: boolean;
  yes?: boolean;
}

export interface CliIo {
  stdout: Writer;
  stderr: Writer;
  env: Record<string, string | undefined>;
  /** Whether a person is at the keyboard (confirmations are asked only then). */
  interactive: boolean;
  /** Asks a yes/no question on the terminal. */
  confirm(question: string): Promise<boolean>;
  /** Runs `onInterrupt` on Ctrl-C instead of the default exit; returns a function that stops listening. */
  onInterrupt(onInterrupt: () => void): () => void;
  /** What the run comes to: set by a command that ends without throwing but not "ok". */
  outcome: { exitCode: number; serving: boolean };
}

/** What a command's action gets: the io, its options with the global ones, and a control connection. */
export class CommandContext {
  private client: GatewayClient | undefined;
  readonly out: Output;

  constructor(
    readonly io: CliIo,
    readonly opts: GlobalOptions & Record<string, unknown>,
  ) {
    this.out = outputFor(io, opts.json === true);
  }

  target(): Target {
    return resolveTarget(this.opts, this.io.env);
  }

  /** The control connection, opened on first use and closed by `close`. */
  async control(): Promise<GatewayClient> {
    this.client ??= await connectControl(this.target());
    return this.client;
  }

  /** A fresh control connection in place of one that closed (following a run across an edge restart). */
  async reconnect(): Promise<GatewayClient> {
    this.client?.close();
    this.client = undefined;
    return this.control();
  }

  close(): void {
    this.client?.close();
  }
}

/**
 * A commander action for `run`: positional arguments first, then the context. The context is
 * closed when the action ends, however it ends.
 */
export function action<A extends unknown[]>(io: CliIo, run: (ctx: CommandContext, ...args: A) => Promise<void>) {
  return async (...raw: unknown[]): Promise<void> => {
    const command = raw.at(-1) as Command;
    const positional = raw.slice(0, command.registeredArguments.length) as A;
    const ctx = new CommandContext(io, command.optsWithGlobals());
    try {
      await run(ctx, ...positional);
    } finally {
      ctx.close();
    }
  };
}

export function outputFor(io: CliIo, json: boolean): Output {
  return new Output({ json, colour: colourWanted(io.stdout, io.env), stdout: io.stdout, stderr: io.stderr });
}
