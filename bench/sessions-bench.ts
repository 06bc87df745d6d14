// `npx tsx bench/sessions-bench.ts [--quick]`
// sessions.preview and sessions.list latency over WebSocket with 10,000 sessions and one
// 5,000-message session, in both modes, against a raw `ws` echo measured in the same run.
// Writes its table to bench/results/<date>-sessions-bench.md.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocketServer } from "ws";
import { type Mode, startGateway, TOKEN } from "../services/gateway/test/fixtures/gateway.js";
import { WsClient } from "../services/gateway/test/fixtures/ws-client.js";
import { FileSessionRepository } from "@gw/sessions";
import { percentile, round } from "./lib/stats.js";
import { type Population, populateFiles, populateNats } from "./sessions-populate.js";

const quick = process.argv.includes("--quick");
const POP: Population = {
  sessions: quick ? 1_000 : 10_000,
  longMessages: quick ? 500 : 5_000,
  longKey: "bench:long",
  shortKey: "bench:short",
};
const ROUNDS = quick ? 100 : 500;
const log = (line: string) => console.log(line);

interface Latency {
  p50: number;
  p99: number;
}

/** Sequential requests on one socket: the latency one client sees, without queueing effects. */
async function measure(send: () => Promise<void>): Promise<Latency> {
  for (let i = 0; i < 30; i++) await send();
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    await send();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { p50: round(percentile(samples, 50), 3), p99: round(percentile(samples, 99), 3) };
}

async function rawEchoBaseline(): Promise<Latency> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  wss.on("connection", (ws) => ws.on("message", (data) => ws.send(String(data))));
  await new Promise((r) => wss.once("listening", r));
  const port = (wss.address() as { port: number }).port;
  const client = await WsClient.open(`ws://127.0.0.1:${port}/`);
  let id = 0;
  const frame = { jsonrpc: "2.0", method: "sessions.preview", params: { key: POP.longKey } };
  const latency = await measure(async () => {
    const mine = ++id;
    client.sendRaw(JSON.stringify({ ...frame, id: mine }));
    await client.next((f) => f.id === mine);
  });
  client.close();
  wss.close();
  return latency;
}

type Row = { mode: Mode; what: string; latency: Latency; baseline: Latency; note: string };
const notes: string[] = [];

async function benchMode(mode: Mode, baseline: Latency): Promise<Row[]> {
  log(`== ${mode}`);
  const dataDir = mkdtempSync(join(tmpdir(), "gw-bench-sessions-"));
  let startup = "";
  if (mode === "embedded") {
    await populateFiles(dataDir, POP, log);
    const t = performance.now();
    await (await FileSessionRepository.open(join(dataDir, "sessions"))).close();
    startup = `file store start-up (recovering ${POP.sessions + 2} sessions): ${Math.round(performance.now() - t)} ms`;
    log(`  ${startup}`);
  }
  const gw = await startGateway(mode, { gateway: { dataDir, limits: { requestTimeoutMs: 60_000 } } });
  try {
    if (mode === "distributed") await populateNats(gw.nats!.url, POP, log);
    const client = await WsClient.open(gw.wsUrl());
    await client.connect(TOKEN);
    const call = (method: string, params: Record<string, unknown>) => async () => {
      const res = await client.request(method, params);
      if (!res.ok) throw new Error(`${method}: ${JSON.stringify(res.error)}`);
    };
    const total = (await client.request("sessions.list", { limit: 1 })).payload?.total;
    log(`  sessions.list total = ${total}`);
    const rows: Row[] = [];
    const add = (what: string, latency: Latency, note = "") => {
      rows.push({ mode, what, latency, baseline, note });
      log(`  ${what}: p50 ${latency.p50} ms, p99 ${latency.p99} ms`);
    };
    const short = await measure(call("sessions.preview", { key: POP.shortKey }));
    add("sessions.preview, 40-message session", short);
    const long = await measure(call("sessions.preview", { key: POP.longKey }));
    add(`sessions.preview, ${POP.longMessages}-message session`, long, `${round(long.p50 / short.p50, 2)}x the 40-message preview`);
    add(`sessions.preview limit 200, ${POP.longMessages}-message session`, await measure(call("sessions.preview", { key: POP.longKey, limit: 200 })));
    add(`sessions.list limit 50 of ${total}`, await measure(call("sessions.list", {})));
    add(`sessions.list agentId filter + offset 5000`, await measure(call("sessions.list", { agentId: "main", offset: 5000 })));
    client.close();
    if (startup) notes.push(startup);
    return rows;
  } finally {
    await gw.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function table(rows: Row[]): string {
  const lines = [
    `${POP.sessions} sessions, one of ${POP.longMessages} messages; ${ROUNDS} sequential requests on one socket per row; baseline = raw \`ws\` echo of the same frame, same run.`,
    "",
    "| mode | request | p50 ms | p99 ms | baseline p50 ms | p50 ratio | note |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const r of rows) {
    const ratio = round(r.latency.p50 / r.baseline.p50, 1);
    lines.push(`| ${r.mode} | ${r.what} | ${r.latency.p50} | ${r.latency.p99} | ${r.baseline.p50} | ${ratio}x | ${r.note} |`);
  }
  return lines.join("\n");
}

/** The table goes with the other runs' results: bench/README.md keeps one current table, by hand. */
function writeTable(text: string, quick: boolean): string {
  const dir = join(import.meta.dirname, "results");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${new Date().toISOString().replace(/[:.]/g, "-")}-sessions-bench${quick ? "-quick" : ""}.md`);
  writeFileSync(path, `${text}\n`);
  return path;
}

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error("sessions bench: took longer than 10 minutes; giving up");
    process.exit(2);
  }, 10 * 60_000);
  deadline.unref();
  const baseline = await rawEchoBaseline();
  log(`raw ws echo: p50 ${baseline.p50} ms, p99 ${baseline.p99} ms`);
  const rows = [...(await benchMode("embedded", baseline)), ...(await benchMode("distributed", baseline))];
  const text = `${table(rows)}\n\n${notes.map((n) => `- ${n}\n`).join("")}\nMeasured ${new Date().toISOString().slice(0, 10)} with \`npx tsx bench/sessions-bench.ts${quick ? " --quick" : ""}\`.`;
  log(`\n${text}`);
  log(`table: ${writeTable(text, quick)}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
