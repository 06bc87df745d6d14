import type WebSocket from "ws";
import { connectSocket } from "./gateway.js";
import { Samples } from "./stats.js";
import { openSocket, requestOnce } from "./ws-load.js";

/** One kind of request whose latency is measured. */
export interface RpcRequest {
  what: string;
  method: string;
  params: Record<string, unknown>;
}

export type Latencies = Record<string, { p50: number; p99: number }>;

/** Requests answered before these are not counted (JIT, first reads). */
const WARMUP_REQUESTS = 30;

/**
 * One control connection per gateway. A control connection also receives every run's lifecycle
 * and session events; this client drops them unread (the e2e WsClient keeps every frame and scans
 * them all for each answer, which under hundreds of runs measured the client, not the gateway).
 */
class RpcClients {
  private nextId = 1;

  private constructor(private readonly sockets: WebSocket[]) {}

  static async open(urls: string[]): Promise<RpcClients> {
    const sockets: WebSocket[] = [];
    try {
      for (const url of urls) {
        sockets.push(await openSocket(url));
        await connectSocket(sockets.at(-1)!);
      }
    } catch (err) {
      for (const socket of sockets) socket.terminate();
      throw err;
    }
    return new RpcClients(sockets);
  }

  async request(side: number, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const answer = await requestOnce(this.sockets[side]!, JSON.stringify({ jsonrpc: "2.0", id, method, params }), id);
    if (answer.ok !== true) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.payload as Record<string, unknown>;
  }

  close(): void {
    for (const socket of this.sockets) socket.terminate();
  }
}

/**
 * Sequential requests on one socket per gateway, `rounds` of each kind, alternating between the
 * gateways request by request (this machine's load drifts by the minute; alternating puts the
 * same drift on every side of a ratio). `into[side][kind]` receives the latencies.
 */
export async function sampleAlternating(urls: string[], requests: RpcRequest[], rounds: number, into: Samples[][]): Promise<void> {
  const clients = await RpcClients.open(urls);
  try {
    for (const [kind, r] of requests.entries()) {
      for (let i = 0; i < rounds + WARMUP_REQUESTS; i++) {
        for (const side of urls.keys()) {
          const t = performance.now();
          await clients.request(side, r.method, r.params);
          if (i >= WARMUP_REQUESTS) into[side]![kind]!.add(performance.now() - t);
        }
      }
    }
  } finally {
    clients.close();
  }
}

/** A fresh `into` for `sampleAlternating`: per side, one `Samples` per kind of request. */
export const newSamples = (sides: number, requests: RpcRequest[]): Samples[][] =>
  Array.from({ length: sides }, () => requests.map(() => new Samples()));

export function summarize(requests: RpcRequest[], samples: Samples[]): Latencies {
  return Object.fromEntries(requests.map((r, kind) => [r.what, samples[kind]!.summary()]));
}

/** What `sessions.list` says each gateway holds (a check that the store under test is the one meant). */
export async function sessionTotals(urls: string[]): Promise<unknown[]> {
  const clients = await RpcClients.open(urls);
  try {
    const totals: unknown[] = [];
    for (const side of urls.keys()) totals.push((await clients.request(side, "sessions.list", { limit: 1 })).total);
    return totals;
  } finally {
    clients.close();
  }
}
