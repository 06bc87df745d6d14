import { freePort } from "@gw/testing";
import { type ServiceProcess, spawnService, waitHealthy, waitOutput } from "../../services/gateway/test/fixtures/processes.js";
import { type GatewayUnderTest, TOKEN } from "./gateway.js";
import { sleep } from "./procs.js";
import { median } from "./stats.js";
import { atMost, type Figure } from "./suite.js";
import { treeRssBytes } from "./system.js";

/** One service process and how long it took from spawn to serving. */
export interface Started {
  name: string;
  proc: ServiceProcess;
  startupMs: number;
  /** The edge's HTTP port. */
  port?: number;
}

const SERVICES = [
  { name: "sessions", entry: "services/sessions/src/main.ts", ready: /sessions serving/, old: (gw: GatewayUnderTest) => gw.sessions![0]! },
  { name: "agent-runner", entry: "services/agent-runner/src/main.ts", ready: /agent-runner serving/, old: (gw: GatewayUnderTest) => gw.runner!.proc },
  { name: "edge", entry: "services/edge/src/main.ts", ready: undefined, old: (gw: GatewayUnderTest) => gw.edges[0]!.proc },
] as const;

/**
 * Stops one service of a distributed gateway and starts it again from the same config, timed from
 * spawn to what the fixture waits for: the "serving" line, or the edge's `GET /health` answering 200.
 */
async function restart(gw: GatewayUnderTest, service: (typeof SERVICES)[number], timeoutMs: number): Promise<Started> {
  await service.old(gw).stop();
  const port = service.ready === undefined ? await freePort() : undefined;
  const args = ["--config", gw.configPath, ...(port === undefined ? [] : ["--port", String(port)])];
  const at = performance.now();
  const proc = spawnService(`${service.name} (restarted)`, service.entry, args, { E2E_GATEWAY_TOKEN: TOKEN, EDGE_ID: "e2e0" });
  try {
    if (port === undefined) await waitOutput(proc, service.ready!, timeoutMs);
    else await waitHealthy(proc, `http://127.0.0.1:${port}`, timeoutMs);
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { name: service.name, proc, port, startupMs: Math.round(performance.now() - at) };
}

/**
 * Restarts the sessions service, the runner and the edge of each gateway against the store it
 * now holds, a service at a time and the gateways in turn for each (so both sides of a ratio
 * start at nearly the same moment of this machine's drifting load). `started` receives every new
 * process as it comes up, for the caller to stop whatever happens.
 */
export async function restartDistributed(gateways: GatewayUnderTest[], started: Started[][], timeoutMs = 60_000): Promise<void> {
  for (const service of SERVICES) {
    for (const [i, gw] of gateways.entries()) (started[i] ??= []).push(await restart(gw, service, timeoutMs));
  }
}

export const edgeUrl = (started: Started[]) => `ws://127.0.0.1:${started.find((s) => s.port !== undefined)!.port}/`;

/**
 * RSS in MiB of every process after `settleMs` of quiet: the median of five readings a second
 * apart, every process read at the same moments (the sides of a ratio see the same machine).
 */
export async function idleRssMiB(pids: number[], settleMs: number): Promise<number[]> {
  await sleep(settleMs);
  const readings: number[][] = pids.map(() => []);
  for (let i = 0; i < 5; i++) {
    for (const [j, pid] of pids.entries()) readings[j]!.push(treeRssBytes(pid));
    await sleep(1_000);
  }
  return readings.map((r) => Math.round((median(r) / 2 ** 20) * 10) / 10);
}

/** The start-up time and idle RSS figures of one service, full store vs empty store (issue 28: <= 2x). */
export function startFigures(
  label: string,
  stored: number,
  startupMs: { empty: number; full: number },
  rssMiB: { empty: number; full: number },
): Figure[] {
  return [
    atMost(`${label} start-up (spawn to ready), ${stored} sessions vs empty store`, "ms", startupMs.full, startupMs.empty, 2),
    atMost(`${label} idle RSS, ${stored} sessions vs empty store`, "MiB", rssMiB.full, rssMiB.empty, 2),
  ];
}
