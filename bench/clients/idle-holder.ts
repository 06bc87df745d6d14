// Opens and holds idle WebSocket connections for the idle-connections benchmark.
// Config comes as JSON in HOLDER_CONFIG; prints "held <n> failed <m>" once all are open, then
// holds them until SIGTERM.
import type WebSocket from "ws";
import { openSocket, requestOnce } from "../lib/ws-load.js";

interface HolderConfig {
  url: string;
  count: number;
  /** Loopback source addresses, used in turn, so ephemeral ports never run short. */
  addresses: string[];
  perAddress: number;
  /** "gateway": authenticate with `connect`; "echo": one echoed frame, the same round trip. */
  mode: "gateway" | "echo";
  token: string;
  concurrency: number;
}

const config = JSON.parse(process.env.HOLDER_CONFIG ?? "{}") as HolderConfig;
const held: WebSocket[] = [];
let failed = 0;
let firstError = "";

async function openOne(index: number): Promise<void> {
  const localAddress = config.addresses[Math.floor(index / config.perAddress)];
  try {
    const socket = await openSocket(config.url, { localAddress });
    const params = { role: "webchat", auth: { token: config.token }, client: { name: "idle", version: "1" } };
    const method = config.mode === "gateway" ? "connect" : "hello";
    const frame = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
    const answer = await requestOnce(socket, frame, 1);
    if (config.mode === "gateway" && answer.ok !== true) throw new Error(JSON.stringify(answer.error));
    held.push(socket);
  } catch (err) {
    failed++;
    firstError ||= (err as Error).message;
  }
}

let next = 0;
async function worker(): Promise<void> {
  while (next < config.count) await openOne(next++);
}
await Promise.all(Array.from({ length: config.concurrency }, worker));
process.stdout.write(`held ${held.length} failed ${failed}${firstError ? ` first error: ${firstError}` : ""}\n`);

process.on("SIGTERM", () => {
  for (const socket of held) socket.terminate();
  process.exit(0);
});
setInterval(() => undefined, 60_000);
