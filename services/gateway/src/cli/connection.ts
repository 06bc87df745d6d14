import { GatewayClient, GatewayRpcError, type SocketLike } from "@gw/client";
import { ConfigError, loadConfigFile } from "@gw/config";
import { GATEWAY_VERSION } from "@gw/contracts";
import WebSocket from "ws";
import { CliError, EXIT, usageError } from "./exit-codes.js";

/** Where the CLI connects and with what; `source` says where that came from (for error messages). */
export interface Target {
  /** The WebSocket URL (ws: or wss:). */
  url: string;
  /** The same gateway over HTTP, for `/health`. */
  httpUrl: string;
  auth?: { token?: string; password?: string };
  source: string;
}

export interface ConnectionOptions {
  url?: string;
  token?: string;
  password?: string;
  config?: string;
}

const DEFAULT_URL = "ws://127.0.0.1:18789";
const OPEN_TIMEOUT_MS = 10_000;

/** `http(s)://` or `ws(s)://`, with or without a path: the socket URL and the HTTP base. */
export function normaliseUrl(raw: string): { url: string; httpUrl: string } {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw usageError(`--url must be a ws://, wss://, http:// or https:// address, got "${raw}"`);
  }
  const secure = parsed.protocol === "https:" || parsed.protocol === "wss:";
  if (!["http:", "https:", "ws:", "wss:"].includes(parsed.protocol)) {
    throw usageError(`--url must be a ws://, wss://, http:// or https:// address, got "${raw}"`);
  }
  const base = `${parsed.host}${parsed.pathname.replace(/\/+$/, "")}`;
  return { url: `${secure ? "wss" : "ws"}://${base}/`, httpUrl: `${secure ? "https" : "http"}://${base}` };
}

/** A local gateway's address from its config: where it binds (loopback for "every interface"). */
function addressFromConfig(bind: string, port: number): string {
  const host = bind === "0.0.0.0" ? "127.0.0.1" : bind === "::" ? "::1" : bind;
  return `ws://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * Flags first, then GATEWAY_URL / GATEWAY_TOKEN / GATEWAY_PASSWORD, then the config file of a
 * local gateway (`--config`, GATEWAY_CONFIG: its bind address, port, token and password), then
 * ws://127.0.0.1:18789 with no credential (loopback trust).
 */
export function resolveTarget(opts: ConnectionOptions, env: Record<string, string | undefined>): Target {
  const configPath = opts.config ?? (env.GATEWAY_CONFIG || undefined);
  const fromConfig = configPath === undefined ? undefined : readConfigTarget(configPath, env);
  const rawUrl = opts.url ?? (env.GATEWAY_URL || undefined) ?? fromConfig?.url ?? DEFAULT_URL;
  const source = opts.url ? "--url" : env.GATEWAY_URL ? "GATEWAY_URL" : fromConfig ? configPath! : "the default address";
  const token = opts.token ?? (env.GATEWAY_TOKEN || undefined) ?? fromConfig?.token;
  const password = opts.password ?? (env.GATEWAY_PASSWORD || undefined) ?? fromConfig?.password;
  const auth = token !== undefined ? { token } : password !== undefined ? { password } : undefined;
  return { ...normaliseUrl(rawUrl), ...(auth ? { auth } : {}), source };
}

function readConfigTarget(path: string, env: Record<string, string | undefined>) {
  try {
    // Only the gateway section: the CLI needs its address and secret, not the others' variables.
    const config = loadConfigFile(path, { env, reader: { service: "cli", sections: ["gateway"] } });
    const { auth } = config.gateway;
    return {
      url: addressFromConfig(config.gateway.bind, config.gateway.port),
      ...(auth.token ? { token: auth.token } : {}),
      ...(auth.password ? { password: auth.password } : {}),
    };
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(err.message);
    throw usageError(`cannot read the config file ${path}: ${(err as Error).message}`);
  }
}

const AUTH_CODES = new Set(["UNAUTHORIZED", "FORBIDDEN", "RATE_LIMITED"]);

/**
 * Why the socket did not open: an edge that refuses the upgrade for the client's address (too
 * many failed attempts: 429, or a forbidden origin) is an authentication failure, anything else
 * (nothing listening, a timeout, another status) is unreachable.
 */
function openFailure(target: Target, err: Error): CliError {
  const status = /Unexpected server response: (\d{3})/.exec(err.message)?.[1];
  if (status === "429") return new CliError(EXIT.auth, "RATE_LIMITED", `the gateway at ${target.url} refuses this address after too many failed attempts; wait a minute`);
  if (status === "401" || status === "403") return new CliError(EXIT.auth, status === "401" ? "UNAUTHORIZED" : "FORBIDDEN", `the gateway at ${target.url} refused the connection (HTTP ${status})`);
  return new CliError(EXIT.unreachable, "UNREACHABLE", `cannot reach the gateway at ${target.url} (from ${target.source}): ${err.message}`);
}

/** Opens a socket and connects as `control`; exit 3 when nothing answers there, 4 when refused. */
export async function connectControl(target: Target): Promise<GatewayClient> {
  let client: GatewayClient;
  let refusal: Error | undefined;
  try {
    client = await GatewayClient.open(target.url, (url) => {
      const socket = new WebSocket(url, { handshakeTimeout: OPEN_TIMEOUT_MS });
      // The reason a socket did not open ("Unexpected server response: 429"): SocketLike's
      // error event does not carry it.
      socket.on("error", (err) => (refusal = err));
      // ws's EventTarget events carry the fields SocketLike reads (text frames as strings).
      return socket as unknown as SocketLike;
    });
  } catch (err) {
    throw openFailure(target, refusal ?? (err as Error));
  }
  try {
    await client.request("connect", {
      role: "control",
      client: { name: "gateway-cli", version: GATEWAY_VERSION },
      ...(target.auth ? { auth: target.auth } : {}),
    });
    return client;
  } catch (err) {
    client.close();
    if (err instanceof GatewayRpcError && AUTH_CODES.has(err.code)) {
      const hint = target.auth ? "" : " (no token or password given: --token, GATEWAY_TOKEN or --config)";
      throw new CliError(EXIT.auth, err.code, `${err.message}${hint}`);
    }
    if (err instanceof GatewayRpcError && !client.isOpen) throw new CliError(EXIT.unreachable, "UNREACHABLE", err.message);
    throw err;
  }
}
