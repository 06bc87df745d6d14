// `npx tsx bench/ab.ts <commit-a> <commit-b> [--suite chat|streams|ws-rpc] [--mode embedded|distributed]
//   [--rounds N] [--streams N] [--stream] [--flags-a "<node flags>"] [--flags-b "<node flags>"]`
// Two commits side by side: each checked out in a worktree under bench/results/tmp/ab/ (kept for
// the next run; `git worktree prune` after removing them), built as production runs it, both
// gateways up at once against one fake upstream, measured in interleaved rounds (A then B, then
// B then A, ...), so the VM's drift falls on both. Prints each round, the medians and B/A per
// round, and writes bench/results/<date>-ab.json. The gateways start with this checkout's test
// fixture, so the two commits must take its config. `--flags-a`/`--flags-b` add V8 flags to one
// side's processes (after the image's, so they win): one commit twice compares heap settings.
//   chat:    one-at-a-time p50 of POST /v1/chat/completions (2 s), then 16 clients (2 s): req/s
//            and every gateway process's CPU per request.
//   streams: N simultaneous streaming completions of 100 chunks 10 ms apart (default 256):
//            wall time, time-to-first-chunk p99, CPU per chunk and the processes' peak RSS.
//   ws-rpc:  the ws-rpc suite's cases (`agents.list`, `sessions.preview`), 16 sockets with 8
//            requests in flight each for 2 s: req/s and every gateway process's CPU per request.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { connectSocket, type GatewayUnderTest, type Mode, startBenchGateway, TOKEN } from "./lib/gateway.js";
import { runHttpLoad } from "./lib/http-load.js";
import { ROOT } from "./lib/procs.js";
import { median } from "./lib/stats.js";
import { streamBurst } from "./lib/stream-burst.js";
import { cpuMicros, treeRssBytes } from "./lib/system.js";
import { withUpstreams } from "./lib/upstreams.js";
import { runWsLoad } from "./lib/ws-load.js";
import { CASES, CLIENTS, IN_FLIGHT, requestFrame, seed } from "./suites/ws-rpc.js";

type Side = "A" | "B";
type Measure = Record<string, number>;

const valueOf = (flag: string) => {
  const i = process.argv.indexOf(flag);
  return i === -1 ? undefined : process.argv[i + 1];
};
const [commitA, commitB] = process.argv.slice(2, 4);
const suite = valueOf("--suite") ?? "chat";
const mode = (valueOf("--mode") ?? "embedded") as Mode;
const rounds = Number(valueOf("--rounds") ?? 4);
const streams = Number(valueOf("--streams") ?? 256);
const streaming = process.argv.includes("--stream");
if (!commitA || !commitB || commitA.startsWith("--") || !["chat", "streams", "ws-rpc"].includes(suite)) {
  console.error("usage: npx tsx bench/ab.ts <commit-a> <commit-b> [--suite chat|streams|ws-rpc] [--mode embedded|distributed] [--rounds N]");
  process.exit(2);
}

const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();

/** A worktree of `commit` that resolves packages from this checkout's node_modules. */
function worktree(commit: string): string {
  const sha = git("rev-parse", "--short", `${commit}^{commit}`);
  const dir = join(ROOT, "bench", "results", "tmp", "ab", sha);
  if (existsSync(dir)) return dir;
  git("worktree", "add", "--detach", dir, sha);
  const modules = join(ROOT, "node_modules");
  mkdirSync(join(dir, "node_modules", "@gw"), { recursive: true });
  for (const name of readdirSync(modules)) {
    if (name !== "@gw") symlinkSync(join(modules, name), join(dir, "node_modules", name));
  }
  // The workspace's own packages are relative links: the same links point into the worktree.
  for (const name of readdirSync(join(modules, "@gw"))) {
    symlinkSync(readlinkSync(join(modules, "@gw", name)), join(dir, "node_modules", "@gw", name));
  }
  // Packages a workspace holds at a major of its own (the CLI's commander).
  for (const group of ["libs", "services"]) {
    for (const pkg of readdirSync(join(ROOT, group))) {
      const own = join(ROOT, group, pkg, "node_modules");
      if (existsSync(own) && existsSync(join(dir, group, pkg)) && !existsSync(join(dir, group, pkg, "node_modules"))) {
        symlinkSync(own, join(dir, group, pkg, "node_modules"));
      }
    }
  }
  return dir;
}

/** `dir`'s services compiled by its own build script. */
async function build(dir: string): Promise<string> {
  const out = join(dir, "bench", "results", "tmp", "dist");
  const script = (await import(pathToFileURL(join(dir, "scripts", "build-services.mjs")).href)) as {
    buildServices(outdir: string, root: string): Promise<void>;
  };
  await script.buildServices(out, dir);
  return out;
}

const cpu = (gw: GatewayUnderTest) => gw.ops.reduce((sum, o) => sum + cpuMicros(o.proc.child.pid!), 0);

async function measureChat(gw: GatewayUnderTest): Promise<Measure> {
  const url = `${gw.httpUrl()}/v1/chat/completions`;
  const body = JSON.stringify({ model: "fast", messages: [{ role: "user", content: "hello" }], stream: streaming });
  const headers = { authorization: `Bearer ${TOKEN}` };
  const one = await runHttpLoad({ url, body, headers, concurrency: 1, warmupMs: 300, durationMs: 2_000 });
  const before = cpu(gw);
  const many = await runHttpLoad({ url, body, headers, concurrency: 16, warmupMs: 300, durationMs: 2_000 });
  return { p50Ms: one.p50Ms, rps16: many.rps, cpuUsPerRequest: (cpu(gw) - before) / Math.max(1, many.ok) };
}

async function measureStreams(gw: GatewayUnderTest): Promise<Measure> {
  const body = JSON.stringify({ model: "stream100", messages: [{ role: "user", content: "hello" }], stream: true });
  const before = cpu(gw);
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, gw.ops.reduce((sum, o) => sum + treeRssBytes(o.proc.child.pid!), 0));
  }, 100);
  const burst = await streamBurst({
    url: `${gw.httpUrl()}/v1/chat/completions`,
    body,
    headers: { authorization: `Bearer ${TOKEN}` },
    count: streams,
    expectedWords: 100,
    timeoutMs: 120_000,
  });
  clearInterval(sampler);
  const cpuUsPerChunk = (cpu(gw) - before) / Math.max(1, burst.complete * 100);
  return { whole: burst.complete, wallMs: burst.wallMs, ttfcP99Ms: burst.ttfcP99Ms, cpuUsPerChunk, peakRssMiB: peak / 2 ** 20 };
}

async function measureWsRpc(gw: GatewayUnderTest): Promise<Measure> {
  const out: Measure = {};
  for (const c of CASES) {
    const name = c.method.replace(/\W/g, "_");
    const before = cpu(gw);
    const load = await runWsLoad({
      url: gw.wsUrl(),
      clients: CLIENTS,
      inFlight: IN_FLIGHT,
      warmupMs: 300,
      durationMs: 2_000,
      frame: requestFrame(c.method, c.params),
      prepare: (socket) => connectSocket(socket).then(() => undefined),
      accept: (answer) => answer.ok === true,
    });
    out[`${name}_rps`] = load.rps;
    out[`${name}_cpuUsPerRequest`] = (cpu(gw) - before) / Math.max(1, load.ok);
  }
  return out;
}

async function main(): Promise<void> {
  const dirs = { A: worktree(commitA!), B: worktree(commitB!) };
  const builds = { A: await build(dirs.A), B: await build(dirs.B) };
  const measure = { chat: measureChat, streams: measureStreams, "ws-rpc": measureWsRpc }[suite]!;
  const results: Record<Side, Measure[]> = { A: [], B: [] };
  await withUpstreams(async ({ upstream }) => {
    const gws = {} as Record<Side, GatewayUnderTest>;
    try {
      for (const side of ["A", "B"] as const) {
        process.env.GW_SERVICE_BUILD = builds[side];
        process.env.GW_EXTRA_NODE_FLAGS = valueOf(side === "A" ? "--flags-a" : "--flags-b") ?? "";
        gws[side] = await startBenchGateway(mode, {
          upstreamUrl: upstream,
          metrics: true,
          ...(suite === "streams"
            ? {
                agents: [{ id: "stream100", name: "Stream", model: "fake/slow-100-10", description: "one-second 100-chunk stream" }],
                extraConfig: { runner: { maxConcurrentRuns: Math.max(256, streams) } },
              }
            : {}),
        });
      }
      if (suite === "ws-rpc") for (const side of ["A", "B"] as const) for (const c of CASES) await seed(gws[side], c);
      // Unmeasured first: connections, JIT, first sessions.
      for (const side of ["A", "B"] as const) await measure(gws[side]);
      for (let r = 0; r < rounds; r++) {
        for (const side of (r % 2 === 0 ? ["A", "B"] : ["B", "A"]) as Side[]) {
          const m = await measure(gws[side]);
          results[side].push(m);
          console.log(`round ${r + 1} ${side}: ${Object.entries(m).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ")}`);
        }
      }
    } finally {
      for (const gw of Object.values(gws)) await gw.stop();
    }
  });
  const summary: Record<string, { a: number; b: number; ratios: number[] }> = {};
  for (const key of Object.keys(results.A[0] ?? {})) {
    const a = results.A.map((m) => m[key]!);
    const b = results.B.map((m) => m[key]!);
    summary[key] = { a: median(a), b: median(b), ratios: b.map((v, i) => Math.round((v / a[i]!) * 100) / 100) };
    console.log(`${key}: median A ${median(a).toFixed(2)}, B ${median(b).toFixed(2)}; B/A per round ${summary[key].ratios.join(" ")}`);
  }
  const date = new Date().toISOString();
  const file = join(ROOT, "bench", "results", `${date.replace(/[:.]/g, "-")}-ab.json`);
  const flags = { a: valueOf("--flags-a"), b: valueOf("--flags-b") };
  const record = { date, flags, command: `npx tsx bench/ab.ts ${process.argv.slice(2).join(" ")}`, a: git("rev-parse", "--short", commitA!), b: git("rev-parse", "--short", commitB!), suite, mode, rounds, results, summary };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`results: ${file}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
