// `npm run fuzz -- --seconds N [--seed S]`: throws generated frames, HTTP requests and slowloris
// connections at a real embedded gateway for N seconds (default 60). Exit 1 when an answer is
// missing or doubled, an INTERNAL error comes back, an HTTP request gets a 500, the process
// dies, its RSS passes the bound, or anything under its data directory changes.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { connect as tcpConnect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import WebSocket from "ws";
import { startGateway, TOKEN } from "../services/gateway/test/fixtures/gateway.js";
import { fuzzFrame, fuzzHttp, materialize } from "../services/edge/test/fuzz-frames.js";
import { treeRssBytes } from "./lib/system.js";

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
}

const SECONDS = flag("--seconds", 60);
const SEED = flag("--seed", Date.now() % 2 ** 31);
// Growth allowed over the RSS measured after warm-up; a leak per request passes it quickly.
const RSS_BOUND_BYTES = 256 * 2 ** 20;
const MAX_SLOW_SOCKETS = 40;

const failures: string[] = [];
const fail = (what: string) => {
  if (failures.length < 50) failures.push(what);
};

/** Every file under `dir` with its size and mtime, to prove nothing was written. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else {
        const st = statSync(path);
        out.set(path, `${st.size}:${st.mtimeMs}`);
      }
    }
  };
  walk(dir);
  return out;
}

async function wsRound(url: string, round: number): Promise<number> {
  const frames = fc.sample(fuzzFrame, { numRuns: 10, seed: SEED + round });
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  const answers: Array<{ id?: unknown; error?: { code?: string } }> = [];
  let closed: number | undefined;
  socket.on("message", (data) => answers.push(JSON.parse(String(data))));
  socket.on("close", (code) => {
    closed = code;
  });
  if (round % 2 === 0) {
    const params = { role: "control", auth: { token: TOKEN } };
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "connect", params }));
  }
  const expected: number[] = [];
  frames.forEach((frame, i) => {
    const id = round * 100 + i + 1;
    const { data, expectsId } = materialize(frame, id);
    if (expectsId) expected.push(id);
    socket.send(data);
  });
  const total = frames.length + (round % 2 === 0 ? 1 : 0);
  const deadline = Date.now() + 10_000;
  while (answers.length < total && closed === undefined && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, 20));
  if (closed !== undefined) fail(`round ${round}: socket closed with ${closed}`);
  if (answers.length !== total) fail(`round ${round}: ${answers.length} answers to ${total} frames`);
  for (const id of expected) {
    const n = answers.filter((a) => a.id === id).length;
    if (n !== 1) fail(`round ${round}: id ${id} answered ${n} times`);
  }
  for (const a of answers) if (a.error?.code === "INTERNAL") fail(`round ${round}: INTERNAL answer`);
  socket.terminate();
  return frames.length;
}

async function httpRound(base: string, round: number): Promise<number> {
  const requests = fc.sample(fuzzHttp, { numRuns: 5, seed: SEED + round });
  for (const req of requests) {
    const res = await fetch(`${base}${req.path}`, {
      method: req.method,
      headers: { "content-type": req.contentType, authorization: `Bearer ${TOKEN}` },
      body: req.method === "GET" ? undefined : req.body,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (res.status === 500) fail(`HTTP ${req.method} ${req.path}: 500 ${text.slice(0, 200)}`);
  }
  return requests.length;
}

/** A connection that sends part of a request and then stalls; the gateway's timeouts must end it. */
function slowSocket(port: number, round: number): Socket {
  const socket = tcpConnect({ host: "127.0.0.1", port });
  socket.on("error", () => undefined);
  socket.on("connect", () => {
    if (round % 2 === 0) socket.write("POST /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{");
    else {
      socket.write(
        "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
      );
      socket.write(Buffer.from([0x81, 0xfe, 0x10, 0x00, 1, 2, 3, 4, 0x7b]));
    }
  });
  return socket;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "gw-fuzz-data-"));
  const gw = await startGateway("embedded", {
    gateway: { dataDir, limits: { failedAuthMax: 1_000_000, preConnectTimeoutMs: 2_000, httpRequestTimeoutMs: 2_000 } },
  });
  const proc = gw.edges[0]!.proc;
  const pid = proc.child.pid!;
  const slow = new Set<Socket>();
  let frames = 0;
  let requests = 0;
  let round = 0;
  let rssStart = 0;
  let rssMax = 0;
  console.log(`fuzzing ${gw.httpUrl()} for ${SECONDS} s, seed ${SEED}`);
  try {
    const before = snapshot(dataDir);
    const started = Date.now();
    while (Date.now() - started < SECONDS * 1000 && proc.child.exitCode === null) {
      round++;
      frames += await wsRound(gw.wsUrl(), round);
      if (round % 4 === 0) requests += await httpRound(gw.httpUrl(), round);
      if (round % 10 === 0 && slow.size < MAX_SLOW_SOCKETS) {
        const s = slowSocket(gw.edges[0]!.port, round);
        slow.add(s);
        s.on("close", () => slow.delete(s));
      }
      const rss = treeRssBytes(pid);
      if (rssStart === 0 && Date.now() - started > Math.min(5_000, SECONDS * 200)) rssStart = rss;
      rssMax = Math.max(rssMax, rss);
      if (round % 200 === 0) {
        const elapsed = Math.round((Date.now() - started) / 1000);
        console.log(`  ${elapsed} s: ${frames} frames, ${requests} HTTP, RSS ${Math.round(rss / 2 ** 20)} MiB`);
      }
    }
    if (proc.child.exitCode !== null) fail(`the gateway died:\n${proc.output().slice(-2000)}`);
    const health = await fetch(`${gw.httpUrl()}/health`).catch(() => undefined);
    if (health?.status !== 200) fail(`/health answers ${health?.status}`);
    if (rssStart > 0 && rssMax > rssStart + RSS_BOUND_BYTES) fail(`RSS grew from ${rssStart} to ${rssMax} bytes`);
    const after = snapshot(dataDir);
    for (const [path, stamp] of after) if (before.get(path) !== stamp) fail(`written: ${path}`);
    if (/unexpected error|internal error/.test(gw.logs())) fail("the gateway logged an internal error");
  } finally {
    for (const s of slow) s.destroy();
    await gw.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const mib = (n: number) => Math.round(n / 2 ** 20);
  console.log(
    `${round} rounds: ${frames} frames, ${requests} HTTP requests; ` +
      `RSS ${mib(rssStart)} -> max ${mib(rssMax)} MiB (bound +${mib(RSS_BOUND_BYTES)})`,
  );
  if (failures.length > 0) {
    console.log(`FAILED (seed ${SEED}):\n${failures.join("\n")}`);
    process.exit(1);
  }
  console.log("OK: every frame answered once, no crash, memory bounded, nothing written");
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
