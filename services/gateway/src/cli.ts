import { randomBytes } from "node:crypto";
import { ConfigError, type ConfigIssue, defaultConfig, type GatewayConfig } from "@gw/config";
import { GATEWAY_VERSION } from "@gw/contracts";
import { CHANNEL_PLUGINS, checkChannels } from "@gw/delivery";
import { checkHookMappings } from "@gw/hooks";
import { loadServiceConfig, parseCommonArgs, serviceLogger, startOpsServers } from "@gw/host";
import { createMetrics, Shutdown } from "@gw/runtime";
import { readsSection, takeCheckAs } from "./check-as.js";
import { startEmbedded } from "./embedded.js";

const USAGE = `gateway ${GATEWAY_VERSION}

Usage:
  gateway start [--config <file>] [--port <n>] [--bind <addr>]   run every service in this process
  gateway config check [--config <file>] [--as <service>]        validate a config file and exit
  gateway --version | --help

The config file may also be named by GATEWAY_CONFIG. Without one, the gateway listens on
127.0.0.1 with agent "main" on builtin/echo and prints a freshly generated token.
config check needs every \${NAME} the file uses to be set. With --as <service> (edge, sessions,
agent-runner, delivery, hooks) it loads the file as that service does, needing only the
variables of the sections the service reads.
`;

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** With no config at all: loopback only, and a fresh token so other local tools can connect too. */
function zeroConfig(): { config: GatewayConfig; generatedToken: string } {
  const generatedToken = randomBytes(24).toString("base64url");
  return { config: defaultConfig({ gateway: { auth: { token: generatedToken } } }), generatedToken };
}

async function start(argv: string[], env: Record<string, string | undefined>): Promise<void> {
  const args = parseCommonArgs(argv);
  const explicit = args.config ?? env.GATEWAY_CONFIG;
  const { config, generatedToken } = explicit
    ? { config: loadServiceConfig(args, env), generatedToken: undefined }
    : zeroConfig();
  const logger = serviceLogger("gateway", config);
  const shutdown = new Shutdown({ logger, timeoutMs: config.ops.shutdownTimeoutMs });
  shutdown.onSignals();
  const metrics = createMetrics({ service: "gateway" });
  const gateway = await startEmbedded({
    config,
    logger,
    metrics,
    listen: { host: args.bind ?? config.gateway.bind, port: args.port ?? config.gateway.port },
  });
  shutdown.add("gateway", () => gateway.close());
  const probe = () => !shutdown.draining && gateway.isHealthy();
  await startOpsServers({ service: "gateway", config, args, logger, shutdown, metrics, probe });

  const host = args.bind ?? config.gateway.bind;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  out(`agent gateway ${GATEWAY_VERSION} (embedded mode) listening on ws://${shownHost}:${gateway.edge.port}`);
  // The token rides in the fragment, which the browser never sends; the page moves it out of the URL.
  out(`  web chat: http://${shownHost}:${gateway.edge.port}/chat${generatedToken ? `#token=${generatedToken}` : ""}`);
  for (const agent of config.agents.list) {
    out(`  agent ${agent.id}${agent.id === config.agents.default ? " (default)" : ""}: model ${agent.model}`);
  }
  if (config.hooks.enabled) {
    const paths = ["wake", "agent", ...config.hooks.mappings.map((mapping) => mapping.path)];
    out(`  hooks: POST ${config.hooks.path}/{${paths.join(",")}}, heartbeat every ${config.hooks.heartbeat.intervalSeconds} s`);
  }
  if (generatedToken)
    out(`  token: ${generatedToken}   (generated for this run; set gateway.auth.token to keep one)`);
  else if (!config.gateway.auth.token && !config.gateway.auth.password) {
    out("  no token or password configured: only local loopback clients can connect");
  }
}

async function check(argv: string[], env: Record<string, string | undefined>): Promise<void> {
  const { reader, rest } = takeCheckAs(argv);
  const args = parseCommonArgs(rest);
  const path = args.config ?? env.GATEWAY_CONFIG;
  if (!path) {
    out("no config file given (--config or GATEWAY_CONFIG); the built-in defaults are valid");
    defaultConfig();
    return;
  }
  const config = loadServiceConfig(args, env, reader);
  // What the services check as they start, beyond the schema (channel settings belong to their
  // plugins, hook templates to the hooks service): the same functions, every issue at once.
  const issues: ConfigIssue[] = [];
  // With --as, only the sections that service reads: the others' values are not in its view.
  const readsChannels = readsSection(reader, "channels");
  const channels = readsChannels ? ((await collectIssues(issues, () => checkChannels(config, CHANNEL_PLUGINS))) ?? []) : [];
  if (readsSection(reader, "hooks")) await collectIssues(issues, () => checkHookMappings(config.hooks.mappings));
  if (issues.length > 0) throw new ConfigError(path, issues);
  const accounts = channels.reduce((sum, channel) => sum + channel.accounts.length, 0);
  out(
    `${path}: OK${reader ? ` as ${reader.service}` : ""} (${config.agents.list.length} agent(s), default "${config.agents.default}"` +
      `${readsChannels ? `; ${channels.length} channel(s), ${accounts} account(s)` : ""})`,
  );
}

/** Runs one start-time check, adding its ConfigError's issues to `issues` instead of throwing. */
async function collectIssues<T>(issues: ConfigIssue[], run: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    issues.push(...err.issues);
    return undefined;
  }
}

async function main(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    out(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === "--version") {
    out(GATEWAY_VERSION);
    return 0;
  }
  if (command === "start") {
    await start(rest, env);
    return -1;
  }
  if (command === "config" && rest[0] === "check") {
    await check(rest.slice(1), env);
    return 0;
  }
  process.stderr.write(`unknown command: ${argv.join(" ")}\n\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2), process.env).then(
  (code) => {
    // -1: a server is running; it exits through the graceful shutdown.
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
    else process.stderr.write(`gateway: ${(err as Error).message ?? String(err)}\n`);
    process.exit(1);
  },
);
