import { parseArgs } from "node:util";

/** Flags every service main understands. */
export interface CommonArgs {
  config?: string;
  port?: number;
  bind?: string;
  healthPort?: number;
  metricsPort?: number;
}

function port(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new Error(`--${flag} must be a port number, got "${value}"`);
  return n;
}

export function parseCommonArgs(argv: string[]): CommonArgs {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      config: { type: "string", short: "c" },
      port: { type: "string", short: "p" },
      bind: { type: "string" },
      "health-port": { type: "string" },
      "metrics-port": { type: "string" },
    },
  });
  const args: CommonArgs = {};
  if (values.config !== undefined) args.config = values.config;
  if (values.bind !== undefined) args.bind = values.bind;
  const p = port("port", values.port);
  if (p !== undefined) args.port = p;
  const hp = port("health-port", values["health-port"]);
  if (hp !== undefined) args.healthPort = hp;
  const mp = port("metrics-port", values["metrics-port"]);
  if (mp !== undefined) args.metricsPort = mp;
  return args;
}
