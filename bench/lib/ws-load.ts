import WebSocket from "ws";
import { Samples } from "./stats.js";

export interface WsLoadOptions {
  url: string;
  clients: number;
  /** Requests each client keeps outstanding. */
  inFlight: number;
  warmupMs: number;
  durationMs: number;
  /** The request text for `id`; the answer must carry the same numeric `id`. */
  frame(id: number): string;
  /** Runs once per socket before the load (the gateway's `connect`). */
  prepare?(socket: WebSocket): Promise<void>;
  /** Whether an answer counts as a success (errors are counted, never as throughput). */
  accept(answer: { id?: unknown; ok?: unknown }): boolean;
}

export interface LoadResult {
  /** Successful answers per second within the measured window. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  errors: number;
  /** The measured window (sum of the windows when pooled over rounds). */
  elapsedMs: number;
  samples: Samples;
  /** Throughput of each round, when this result pools several (bench/lib/rounds.ts). */
  roundRps?: number[];
  /** Median latency of each round, likewise. */
  roundP50Ms?: number[];
}

export function openSocket(url: string, opts: { localAddress?: string } = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { localAddress: opts.localAddress, perMessageDeflate: false });
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`could not open ${url}`));
    }, 10_000);
    socket.once("open", () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** Sends one request and resolves with its parsed answer (bounded). */
export function requestOnce(socket: WebSocket, text: string, id: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.off("message", onMessage);
      reject(new Error(`no answer to request ${id}`));
    }, 10_000);
    const onMessage = (data: WebSocket.RawData) => {
      const frame = JSON.parse(String(data)) as Record<string, unknown>;
      if (frame.id !== id) return;
      clearTimeout(timer);
      socket.off("message", onMessage);
      resolve(frame);
    };
    socket.on("message", onMessage);
    socket.send(text);
  });
}

/**
 * Closed-loop load: every client keeps `inFlight` requests outstanding and sends the next one
 * as each answer arrives. Only answers to requests sent inside the measured window count.
 */
export async function runWsLoad(opts: WsLoadOptions): Promise<LoadResult> {
  const sockets = await Promise.all(Array.from({ length: opts.clients }, () => openSocket(opts.url)));
  try {
    if (opts.prepare) await Promise.all(sockets.map((s) => opts.prepare!(s)));
    const samples = new Samples();
    let ok = 0;
    let errors = 0;
    let nextId = 1_000_000;
    let phase: "warmup" | "measure" | "drain" = "warmup";
    let outstanding = 0;
    const sentAt = new Map<number, { at: number; measured: boolean }>();

    const send = (socket: WebSocket) => {
      const id = nextId++;
      sentAt.set(id, { at: performance.now(), measured: phase === "measure" });
      outstanding++;
      socket.send(opts.frame(id));
    };
    for (const socket of sockets) {
      socket.on("message", (data) => {
        const answer = JSON.parse(String(data)) as { id?: unknown; ok?: unknown };
        const sent = typeof answer.id === "number" ? sentAt.get(answer.id) : undefined;
        if (sent === undefined) return;
        sentAt.delete(answer.id as number);
        outstanding--;
        if (sent.measured) {
          if (opts.accept(answer)) {
            ok++;
            samples.add(performance.now() - sent.at);
          } else errors++;
        }
        if (phase !== "drain") send(socket);
      });
    }
    for (const socket of sockets) for (let i = 0; i < opts.inFlight; i++) send(socket);

    await new Promise((r) => setTimeout(r, opts.warmupMs));
    phase = "measure";
    const start = performance.now();
    await new Promise((r) => setTimeout(r, opts.durationMs));
    phase = "drain";
    const elapsedMs = performance.now() - start;
    const drainDeadline = Date.now() + 10_000;
    while (outstanding > 0 && Date.now() < drainDeadline) await new Promise((r) => setTimeout(r, 20));
    const { p50, p99 } = samples.summary();
    return { rps: Math.round(ok / (elapsedMs / 1000)), p50Ms: p50, p99Ms: p99, ok, errors, elapsedMs, samples };
  } finally {
    for (const socket of sockets) socket.terminate();
  }
}
