import { randomBytes } from "node:crypto";
import { defaultConfig, type GatewayConfig } from "@gw/config";
import { GATEWAY_VERSION } from "@gw/contracts";
import type { CommonArgs } from "@gw/host";
import { type Command, InvalidArgumentError } from "commander";
import { type CliIo, type GlobalOptions } from "../context.js";
import { examples } from "../help.js";

/** With no config at all: loopback only, and a fresh token so other local tools can connect too. */
function zeroConfig(): { config: GatewayConfig; generatedToken: string } {
  const generatedToken = randomBytes(24).toString("base64url");
  return { config: defaultConfig({ gateway: { auth: { token: generatedToken } } }), generatedToken };
}

function portNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`must be a port number, got "${value}"`);
  return n;
}

interface StartOptions extends GlobalOptions {
  port?: number;
  bind?: string;
  healthPort?: number;
  metricsPort?: number;
}

/** The banner: where the gateway listens and what it serves. On stderr, so stdout stays for results. */
function banner(config: GatewayConfig, host: string, port: number, generatedToken: string | undefined): string[] {
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const lines = [`agent gateway ${GATEWAY_VERSION} (embedded mode) listening on ws://${shownHost}:${port}`];
  // The token rides in the fragment, which the browser never sends; the page moves it out of the URL.
  lines.push(`  web chat: http://${shownHost}:${port}/chat${generatedToken ? `#token=${generatedToken}` : ""}`);
  for (const agent of config.agents.list) {
    lines.push(`  agent ${agent.id}${agent.id === config.agents.default ? " (default)" : ""}: model ${agent.model}`);
  }
  if (config.hooks.enabled) {
    const paths = ["wake", "agent", ...config.hooks.mappings.map((mapping) => mapping.path)];
    lines.push(`  hooks: POST ${config.hooks.path}/{${paths.join(",")}}, heartbeat every ${config.hooks.heartbeat.intervalSeconds} s`);
  }
  if (generatedToken) lines.push(`  token: ${generatedToken}   (generated for this run; set gateway.auth.token to keep one)`);
  else if (!config.gateway.auth.token && !config.gateway.auth.password) {
    lines.push("  no token or password configured: only local loopback clients can connect");
  }
  return lines;
}

async function start(opts: StartOptions, io: CliIo): Promise<void> {
  // Loaded here, not with the CLI: every service's code is only needed to run them.
  const [{ loadServiceConfig, serviceLogger, startOpsServers }, { createMetrics, guardProcess, Shutdown }, { startEmbedded }] = await Promise.all([
    import("@gw/host"),
    import("@gw/runtime"),
    import("../../embedded.js"),
  ]);
  const args: CommonArgs = {
    ...(opts.config === undefined ? {} : { config: opts.config }),
    ...(opts.port === undefined ? {} : { port: opts.port }),
    ...(opts.bind === undefined ? {} : { bind: opts.bind }),
    ...(opts.healthPort === undefined ? {} : { healthPort: opts.healthPort }),
    ...(opts.metricsPort === undefined ? {} : { metricsPort: opts.metricsPort }),
  };
  const explicit = args.config ?? io.env.GATEWAY_CONFIG;
  const { config, generatedToken } = explicit ? { config: loadServiceConfig(args, io.env), generatedToken: undefined } : zeroConfig();
  const logger = serviceLogger("gateway", config);
  const shutdown = new Shutdown({ logger, timeoutMs: config.ops.shutdownTimeoutMs });
  shutdown.onSignals();
  const metrics = createMetrics({ service: "gateway" });
  // One process serves every client and has no supervisor: a fault is logged and counted, and the
  // gateway keeps serving (docs/decisions.md, "Process faults").
  guardProcess({ logger, metrics, onUncaughtException: "keep-serving", shutdown: (reason, code) => shutdown.run(reason, code) });
  const host = args.bind ?? config.gateway.bind;
  const gateway = await startEmbedded({ config, logger, metrics, listen: { host, port: args.port ?? config.gateway.port } });
  shutdown.add("gateway", () => gateway.close());
  const probe = () => !shutdown.draining && gateway.isHealthy();
  await startOpsServers({ service: "gateway", config, args, logger, shutdown, metrics, probe });
  for (const line of banner(config, host, gateway.edge.port, generatedToken)) io.stderr.write(`${line}\n`);
  io.outcome.serving = true;
}

export function registerStartCommand(program: Command, io: CliIo): void {
  const command = program
    .command("start")
    .description("run every service in this process (embedded mode); without a config: loopback, agent main on builtin/echo, a generated token")
    .option("-p, --port <n>", "listen on this port (else gateway.port, 18789)", portNumber)
    .option("--bind <addr>", "listen on this address (else gateway.bind, 127.0.0.1)")
    .option("--health-port <n>", "serve gRPC health on this port (else ops.healthPort)", portNumber)
    .option("--metrics-port <n>", "serve Prometheus metrics on this port (else ops.metricsPort)", portNumber)
    .action(async (_opts: unknown, cmd: Command) => start(cmd.optsWithGlobals<StartOptions>(), io));
  examples(command, "gateway start", "gateway start --config gateway.json5 --port 18789 --metrics-port 9464");
}
