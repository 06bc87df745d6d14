import { GatewayRpcError } from "@gw/client";
import { CliError } from "./exit-codes.js";
import { type Colour, paint } from "./format.js";

export interface Writer {
  write(text: string): unknown;
  isTTY?: boolean;
}

/**
 * Where a command's results go. With `--json` a command's result is one JSON document on
 * stdout and nothing else is written there (notes and errors go to stderr); without it, lines
 * for a person, coloured when `colour` is on.
 */
export class Output {
  constructor(
    readonly opts: { json: boolean; colour: boolean; stdout: Writer; stderr: Writer },
  ) {}

  get json(): boolean {
    return this.opts.json;
  }

  paint(colour: Colour, text: string): string {
    return paint(this.opts.colour, colour, text);
  }

  /** A command's result: `value` as JSON, or what `human` makes of it (nothing when that is empty). */
  result(value: unknown, human: () => string): void {
    if (this.opts.json) this.opts.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    else {
      const text = human();
      if (text !== "") this.opts.stdout.write(`${text}\n`);
    }
  }

  /** Text for a person as it comes (a streamed answer); nothing under --json. */
  stream(text: string): void {
    if (!this.opts.json) this.opts.stdout.write(text);
  }

  /** A JSON line per item as it comes (`--watch` under --json), or nothing. */
  jsonLine(value: unknown): void {
    if (this.opts.json) this.opts.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** Progress and side remarks: stderr, so stdout stays the result. */
  note(text: string): void {
    this.opts.stderr.write(`${text}\n`);
  }

  /** A failure: the code and message on stderr, and under --json also as the one document on stdout. */
  error(err: unknown, exitCode: number): void {
    const { code, message } = describeError(err);
    this.opts.stderr.write(`${this.paintErr(`error: ${code}`)}: ${message}\n`);
    if (this.opts.json) this.opts.stdout.write(`${JSON.stringify({ ok: false, exitCode, error: { code, message } }, null, 2)}\n`);
  }

  private paintErr(text: string): string {
    return paint(this.opts.colour && this.opts.stderr.isTTY === true, "red", text);
  }
}

export function describeError(err: unknown): { code: string; message: string } {
  if (err instanceof GatewayRpcError || err instanceof CliError) return { code: err.code, message: err.message };
  return { code: "ERROR", message: err instanceof Error ? err.message : String(err) };
}
