import type WebSocket from "ws";
import {
  AGENTS,
  type GatewayOptions,
  type GatewayUnderTest,
  type Mode,
  startGateway,
  TOKEN,
} from "../../services/gateway/test/fixtures/gateway.js";
import { openSocket, requestOnce } from "./ws-load.js";

export { type GatewayUnderTest, type Mode, TOKEN };

/**
 * The gateway as real processes, started by the same fixture as the e2e tests. Load comes from
 * a handful of loopback addresses, so the per-IP connection cap is raised to what the bench opens.
 */
export function startBenchGateway(
  mode: Mode,
  opts: {
    limits?: Record<string, unknown>;
    /** Merged over the `gateway` section beside the raised connection cap (e.g. `dataDir`). */
    gateway?: Record<string, unknown>;
    /** How long an embedded gateway may take to become healthy (the fixture's default when absent). */
    startupTimeoutMs?: number;
    upstreamUrl?: string;
    metrics?: boolean;
    extraConfig?: Record<string, unknown>;
    /** Edge processes in distributed mode (default 1). */
    edges?: number;
    /** Runner, delivery and hooks processes in distributed mode (the fixture's defaults when absent). */
    runners?: number;
    deliveryReplicas?: number;
    hooksReplicas?: number;
    /** More agents and model providers beside the fake upstream's (with `upstreamUrl`). */
    agents?: Array<Record<string, unknown>>;
    providers?: Record<string, unknown>;
  } = {},
): Promise<GatewayUnderTest> {
  const options: GatewayOptions = {
    ...(opts.edges ? { edges: opts.edges } : {}),
    ...(opts.runners ? { runners: opts.runners } : {}),
    ...(opts.deliveryReplicas ? { deliveryReplicas: opts.deliveryReplicas } : {}),
    ...(opts.hooksReplicas ? { hooksReplicas: opts.hooksReplicas } : {}),
    gateway: { ...opts.gateway, limits: { maxConnectionsPerIp: 100_000, ...opts.limits } },
    ...(opts.startupTimeoutMs ? { startupTimeoutMs: opts.startupTimeoutMs } : {}),
    ...(opts.metrics ? { health: true } : {}),
    ...(opts.extraConfig ? { extraConfig: opts.extraConfig } : {}),
  };
  if (opts.upstreamUrl) {
    // Agents on the fake upstream (bench/servers/fake-openai.ts): "fast" answers at once, "slow"
    // streams 50 chunks 20 ms apart (a one-second run).
    options.agents = [
      ...AGENTS,
      { id: "fast", name: "Fast", model: "fake/zero", description: "zero-delay fake upstream" },
      { id: "slow", name: "Slow", model: "fake/slow-50-20", description: "one-second streaming run" },
      { id: "burst", name: "Burst", model: "fake/slow-200-0", description: "200 chunks at once" },
      { id: "stamp", name: "Stamp", model: "fake/stamp-50-10", description: "chunks stamped with their send time" },
      ...(opts.agents ?? []),
    ];
    options.models = { providers: { fake: { kind: "openai", baseUrl: `${opts.upstreamUrl}/v1` }, ...opts.providers } };
  }
  return startGateway(mode, options);
}

let connectId = 1;

/** Sends `connect` with the configured token and fails loudly when it is refused. */
export async function connectSocket(socket: WebSocket, role = "control"): Promise<Record<string, unknown>> {
  const id = connectId++;
  const answer = await requestOnce(
    socket,
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "connect",
      params: { role, auth: { token: TOKEN }, client: { name: "bench", version: "1" } },
    }),
    id,
  );
  if (answer.ok !== true) throw new Error(`connect refused: ${JSON.stringify(answer.error)}`);
  return answer.payload as Record<string, unknown>;
}

/**
 * Asks for every run's whole event stream on a control connection (`agent.subscribe { all }`, the
 * firehose): control connections otherwise receive only every run's lifecycle events.
 */
export async function subscribeAll(socket: WebSocket): Promise<void> {
  const id = connectId++;
  const answer = await requestOnce(
    socket,
    JSON.stringify({ jsonrpc: "2.0", id, method: "agent.subscribe", params: { all: true } }),
    id,
  );
  if (answer.ok !== true) throw new Error(`agent.subscribe refused: ${JSON.stringify(answer.error)}`);
}

/** The methods this gateway accepts, from a `connect` answer (what exists decides what runs). */
export async function gatewayMethods(gw: GatewayUnderTest): Promise<Set<string>> {
  const socket = await openSocket(gw.wsUrl());
  try {
    const payload = await connectSocket(socket);
    return new Set(payload.methods as string[]);
  } finally {
    socket.close();
  }
}

/** Whether an HTTP route exists (anything but 404 to an authenticated probe). */
export async function routeExists(gw: GatewayUnderTest, method: string, path: string): Promise<boolean> {
  const res = await fetch(`${gw.httpUrl()}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: method === "GET" ? undefined : "{}",
  });
  await res.arrayBuffer();
  return res.status !== 404;
}
