import { GatewayRpcError } from "@gw/client";

/** The CLI's exit codes (README "CLI", docs/cli.md): scripts branch on them. */
export const EXIT = {
  ok: 0,
  /** The gateway answered with an error; its code is printed. */
  refused: 1,
  /** Wrong arguments or options. */
  usage: 2,
  /** No gateway at the address (or it stopped answering). */
  unreachable: 3,
  /** The gateway did not accept the credential (or the role). */
  auth: 4,
  /** Interrupted (Ctrl-C): 128 + SIGINT. */
  interrupted: 130,
} as const;

/** A failure the CLI reports in its own words, with the exit code that says what kind it is. */
export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export function usageError(message: string): CliError {
  return new CliError(EXIT.usage, "USAGE", message);
}

/** What a gateway error answer means for the exit code (any command after `connect`). */
export function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof GatewayRpcError) return EXIT.refused;
  return EXIT.refused;
}
