// `npm run fuzz -- --seconds N [--seed S] [--mode embedded|distributed] [--lanes hostile,state]`:
// for N seconds (default 60) against a real gateway, embedded (default) or distributed (edge,
// agent runner and sessions processes over a real nats-server and redis-server), two lanes at once:
// - hostile: generated frames, HTTP requests and slowloris connections that must change nothing;
// - state: valid runs, aborts, waits, deletes, resets, patches and compactions racing on a few
//   session keys from several control sockets (bench/lib/state-lane.ts).
// Exit 1 when an answer is missing or doubled, an INTERNAL error comes back, an HTTP request gets
// a 500, a process dies or logs an unhandled fault, RSS passes the bound, or (hostile lane alone)
// a store is written: embedded, anything under the data directory; distributed, any Redis key or
// JetStream stream, except one failed-auth count per refused credential.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { connect as tcpConnect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { fuzzFrame, fuzzHttp } from "../services/edge/test/fuzz-frames.js";
import { fuzzSocket, sendFuzzHttp } from "../services/gateway/test/fixtures/fuzz-socket.js";
import { type GatewayUnderTest, type Mode, startGateway, TOKEN } from "../services/gateway/test/fixtures/gateway.js";
import { type StoreWatch, watchStores } from "../services/gateway/test/fixtures/store-writes.js";
import { formatOutcomes, runStateLane } from "./lib/state-lane.js";
import { treeRssBytes } from "./lib/system.js";

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
}

function textFlag(name: string, fallback: string): string {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : String(process.argv[index + 1]);
}

const SECONDS = flag("--seconds", 60);
const MODE = textFlag("--mode", "embedded") as Mode;
const SEED = flag("--seed", Date.now() % 2 ** 31);
const LANES = new Set(textFlag("--lanes", "hostile,state").split(","));
const STATE_SOCKETS = 6;
// Growth allowed over the RSS measured after warm-up; a leak per request passes it quickly.
const RSS_BOUND_BYTES = 256 * 2 ** 20;
// With the state lane the working set (a minute of runs' results and events) grows for a while by
// design; a leak shows as growth that goes on: the second half's peak may pass the first half's by this.
const RSS_LEVEL_BYTES = 64 * 2 ** 20;
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

/** Refused credentials (WS UNAUTHORIZED, HTTP 401): each may add one failed-auth count. */
let unauthorized = 0;

async function wsRound(url: string, round: number): Promise<number> {
  const frames = fc.sample(fuzzFrame, { numRuns: 10, seed: SEED + round });
  const token = round % 2 === 0 ? TOKEN : undefined;
  const outcome = await fuzzSocket(url, frames, { firstId: round * 100 + 1, token, othersEvents: LANES.has("state") });
  unauthorized += outcome.unauthorized;
  for (const problem of outcome.problems) fail(`round ${round}: ${problem}`);
  return frames.length;
}

async function httpRound(base: string, round: number): Promise<number> {
  const requests = fc.sample(fuzzHttp, { numRuns: 5, seed: SEED + round });
  for (const req of requests) {
    const { status, text } = await sendFuzzHttp(base, req, TOKEN);
    if (status === 401) unauthorized++;
    if (status === 500) fail(`HTTP ${req.method} ${req.path}: 500 ${text.slice(0, 200)}`);
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

/** Every service process of the gateway: one in embedded mode, edge + runner + sessions distributed. */
function processesOf(gw: GatewayUnderTest) {
  return [...gw.edges.map((e) => e.proc), ...(gw.runners ?? []), ...(gw.sessions ?? [])];
}

/**
 * Proves nothing was written: the data directory (embedded) or Redis and JetStream (distributed).
 * The state lane writes by design, so with it on there is nothing to prove.
 */
async function watchWrites(gw: GatewayUnderTest, dataDir: string): Promise<StoreWatch> {
  if (LANES.has("state")) return { writes: async () => ({ unexpected: [], failedAuthHits: unauthorized }), close: async () => undefined };
  if (MODE === "distributed") return watchStores(gw);
  const before = snapshot(dataDir);
  return {
    writes: async () => {
      const after = snapshot(dataDir);
      const unexpected = [...after].filter(([path, stamp]) => before.get(path) !== stamp).map(([path]) => path);
      // Embedded failed-auth counters live in memory, not under the data directory.
      return { unexpected, failedAuthHits: unauthorized };
    },
    close: async () => undefined,
  };
}

/** What a fuzzing run counts, and the memory of the gateway's processes as it went. */
interface Tally {
  round: number;
  frames: number;
  requests: number;
  rssStart: number;
  rssMax: number;
  rssFirstHalfMax: number;
}

/** The hostile lane's rounds (or, with the state lane alone, a wait) for SECONDS, sampling RSS as they go. */
async function fuzzRounds(gw: GatewayUnderTest, procs: ReturnType<typeof processesOf>, tally: Tally, slow: Set<Socket>): Promise<void> {
  const alive = () => procs.every((p) => p.child.exitCode === null && p.child.signalCode === null);
  const started = Date.now();
  while (Date.now() - started < SECONDS * 1000 && alive()) {
    const round = ++tally.round;
    if (LANES.has("hostile")) {
      tally.frames += await wsRound(gw.wsUrl(), round);
      if (round % 4 === 0) tally.requests += await httpRound(gw.httpUrl(), round);
      if (round % 10 === 0 && slow.size < MAX_SLOW_SOCKETS) {
        const s = slowSocket(gw.edges[0]!.port, round);
        slow.add(s);
        s.on("close", () => slow.delete(s));
      }
    } else await new Promise((resolve) => setTimeout(resolve, 100));
    const rss = rssOf(procs);
    if (tally.rssStart === 0 && Date.now() - started > Math.min(5_000, SECONDS * 200)) tally.rssStart = rss;
    tally.rssMax = Math.max(tally.rssMax, rss);
    if (Date.now() - started < SECONDS * 500) tally.rssFirstHalfMax = tally.rssMax;
    if (round % 200 === 0) {
      const elapsed = Math.round((Date.now() - started) / 1000);
      console.log(`  ${elapsed} s: ${tally.frames} frames, ${tally.requests} HTTP, RSS ${Math.round(rss / 2 ** 20)} MiB`);
    }
  }
}

function rssOf(procs: ReturnType<typeof processesOf>): number {
  return procs.reduce((sum, p) => sum + treeRssBytes(p.child.pid!), 0);
}

/** After the rounds: every process alive and healthy, memory bounded, nothing written, no fault logged. */
async function verify(gw: GatewayUnderTest, procs: ReturnType<typeof processesOf>, watch: StoreWatch, tally: Tally): Promise<void> {
  for (const p of procs) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) fail(`${p.name} died:\n${p.output().slice(-2000)}`);
  }
  const health = await fetch(`${gw.httpUrl()}/health`).catch(() => undefined);
  if (health?.status !== 200) fail(`/health answers ${health?.status}`);
  const { rssStart, rssMax, rssFirstHalfMax } = tally;
  if (LANES.has("state")) {
    if (rssFirstHalfMax > 0 && rssMax > rssFirstHalfMax + RSS_LEVEL_BYTES) {
      fail(`RSS did not level off: the first half's peak ${rssFirstHalfMax} bytes, the second half's ${rssMax}`);
    }
  } else if (rssStart > 0 && rssMax > rssStart + RSS_BOUND_BYTES) fail(`RSS grew from ${rssStart} to ${rssMax} bytes`);
  const writes = await watch.writes();
  for (const what of writes.unexpected) fail(`written: ${what}`);
  if (writes.failedAuthHits !== unauthorized) {
    fail(`${writes.failedAuthHits} failed-auth counts for ${unauthorized} refused credentials`);
  }
  if (/unexpected error|internal error/.test(gw.logs())) fail("the gateway logged an internal error");
  const faults = gw.fullLogs().match(/unhandled promise rejection|uncaught exception/g);
  if (faults !== null) fail(`the gateway logged ${faults.length} unhandled faults`);
}

/** The run's numbers, then OK or every failure (exit 1). */
function summarize(tally: Tally): void {
  const mib = (n: number) => Math.round(n / 2 ** 20);
  const { rssStart, rssMax, rssFirstHalfMax } = tally;
  console.log(
    `${tally.round} rounds: ${tally.frames} frames, ${tally.requests} HTTP requests, ${unauthorized} refused credentials; ` +
      (LANES.has("state")
        ? `RSS ${mib(rssStart)} -> first half's peak ${mib(rssFirstHalfMax)} -> peak ${mib(rssMax)} MiB (level within +${mib(RSS_LEVEL_BYTES)})`
        : `RSS ${mib(rssStart)} -> max ${mib(rssMax)} MiB (bound +${mib(RSS_BOUND_BYTES)})`),
  );
  if (failures.length > 0) {
    console.log(`FAILED (seed ${SEED}):\n${failures.join("\n")}`);
    process.exit(1);
  }
  const stores = LANES.has("state")
    ? "every state-changing request answered once"
    : MODE === "embedded"
      ? "nothing written to the data directory"
      : `nothing written to Redis or JetStream but ${unauthorized} failed-auth counts`;
  console.log(`OK: every frame answered once, no process died or logged a fault, memory bounded, ${stores}`);
}

async function main(): Promise<void> {
  if (MODE !== "embedded" && MODE !== "distributed") throw new Error(`--mode must be embedded or distributed, not ${MODE}`);
  if ([...LANES].some((lane) => lane !== "hostile" && lane !== "state") || LANES.size === 0) {
    throw new Error(`--lanes takes hostile, state or both (comma-separated), not ${[...LANES].join(",")}`);
  }
  const dataDir = mkdtempSync(join(tmpdir(), "gw-fuzz-data-"));
  const gw = await startGateway(MODE, {
    gateway: { dataDir, limits: { failedAuthMax: 1_000_000, preConnectTimeoutMs: 2_000, httpRequestTimeoutMs: 2_000 } },
    // The state lane runs hundreds of runs a second, whose events (for resumes) and results (for
    // agent.wait) are kept for 10 minutes by default, by design; a minute keeps the RSS check
    // about leaks: past the first minute, memory must level off.
    runner: { eventRetentionSeconds: 60, resultRetentionSeconds: 60, eventRetentionMaxBytes: 32 * 2 ** 20 },
  });
  const procs = processesOf(gw);
  const slow = new Set<Socket>();
  const tally: Tally = { round: 0, frames: 0, requests: 0, rssStart: 0, rssMax: 0, rssFirstHalfMax: 0 };
  console.log(
      `fuzzing the ${MODE} gateway (${procs.map((p) => p.name).join(", ")}) at ${gw.httpUrl()} for ${SECONDS} s, ` +
      `lanes ${[...LANES].join(" + ")}, seed ${SEED}`,
  );
  let watch: StoreWatch | undefined;
  try {
    watch = await watchWrites(gw, dataDir);
    const lane = { url: gw.wsUrl(), token: TOKEN, sockets: STATE_SOCKETS, window: 8, keys: 4, seed: SEED, answerTimeoutMs: 60_000 };
    const stateLane = LANES.has("state") ? runStateLane(lane, SECONDS) : undefined;
    await fuzzRounds(gw, procs, tally, slow);
    if (stateLane !== undefined) {
      const report = await stateLane;
      tally.rssMax = Math.max(tally.rssMax, rssOf(procs));
      console.log(`state lane: ${report.sent} requests on ${STATE_SOCKETS} sockets, ${report.answered} answered\n${formatOutcomes(report.outcomes)}`);
      for (const problem of report.problems) fail(`state lane: ${problem}`);
    }
    await verify(gw, procs, watch, tally);
  } finally {
    for (const s of slow) s.destroy();
    await watch?.close();
    await gw.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  summarize(tally);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
