import { spawn } from "node:child_process";
import { type GatewayUnderTest, type Mode, startBenchGateway } from "../lib/gateway.js";
import { sleep } from "../lib/procs.js";
import { median } from "../lib/stats.js";
import type { BenchContext, BenchResult, Figure, Suite } from "../lib/suite.js";
import { treeRssBytes } from "../lib/system.js";

// Idle RSS targets (issue 28): what one process of each kind may hold with nothing to do.
const TARGET_MIB: Record<string, number> = { gateway: 100, edge: 70 };
const OTHER_SERVICE_MIB = 80;
const SAMPLES = 5;

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** The median of a few RSS readings a second apart, after the process has had time to settle. */
async function idleRss(pid: number): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    readings.push(treeRssBytes(pid));
    await sleep(1_000);
  }
  return mib(median(readings));
}

/** A Node process holding one idle HTTP server: the floor every service process starts from. */
async function bareNodeRss(settleMs: number): Promise<number> {
  const code = 'require("node:http").createServer((q, r) => r.end()).listen(0, "127.0.0.1")';
  const child = spawn(process.execPath, ["-e", code], { stdio: "ignore" });
  try {
    await sleep(settleMs);
    return await idleRss(child.pid!);
  } finally {
    child.kill("SIGKILL");
  }
}

function idleFigure(name: string, rssMiB: number, bareMiB: number): Figure {
  const max = TARGET_MIB[name.replace(/-\d+$/, "")] ?? OTHER_SERVICE_MIB;
  return {
    name: `idle RSS, ${name}`,
    unit: "MiB",
    gateway: rssMiB,
    baseline: bareMiB,
    ratio: Math.round((rssMiB / bareMiB) * 100) / 100,
    target: `<= ${max} MiB`,
    pass: rssMiB <= max,
  };
}

async function measureMode(ctx: BenchContext, mode: Mode, gw: GatewayUnderTest, bareMiB: number, settleMs: number): Promise<BenchResult> {
  const figures: Figure[] = [];
  const rss: Record<string, number> = {};
  for (const { name, proc } of gw.ops) {
    rss[name] = await idleRss(proc.child.pid!);
    figures.push(idleFigure(name, rss[name], bareMiB));
  }
  ctx.log(`  ${mode}: ${Object.entries(rss).map(([name, value]) => `${name} ${value} MiB`).join(", ")} (bare node ${bareMiB} MiB)`);
  return { bench: `idle memory ${mode}`, status: "ok", figures, details: { rssMiB: rss, bareNodeMiB: bareMiB, settleMs } };
}

/**
 * Idle RSS of every process in both modes (with metrics and gRPC health on, as a deployment runs
 * them), beside a bare Node HTTP server's measured in the same run. "Idle" is after V8 has had
 * time to give back what start-up left behind: a freshly started process holds 15-20 MiB of
 * start-up garbage that its memory reducer collects after about a minute and a half of quiet,
 * so both modes and the bare server are started together and measured after 100 s.
 */
async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const settleMs = ctx.args.quick ? 3_000 : 100_000;
  const modes = ["embedded", "distributed"] as const;
  const started = await Promise.allSettled(modes.map((mode) => startBenchGateway(mode, { metrics: true })));
  try {
    const bare = await bareNodeRss(settleMs);
    const results: BenchResult[] = [];
    for (const [i, mode] of modes.entries()) {
      const gw = started[i]!;
      results.push(
        gw.status === "fulfilled"
          ? await measureMode(ctx, mode, gw.value, bare, settleMs)
          : { bench: `idle memory ${mode}`, status: "failed", reason: String((gw.reason as Error).message).split("\n")[0]! },
      );
    }
    return results;
  } finally {
    await Promise.all(started.map((gw) => (gw.status === "fulfilled" ? gw.value.stop() : undefined)));
  }
}

export const memorySuite: Suite = { name: "memory", run };
