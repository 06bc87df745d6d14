// `npm run bench [-- --quick] [--only ws-rpc,idle] [--seconds N] [--connections N] [--rounds N]`
// `npm run bench -- --only soak [--soak-seconds N]`: the soak runs only when named, as does
// `--only run-events` (one JetStream stream vs the split, on a 3-node cluster).
// Starts everything it needs, runs every benchmark against a raw baseline measured in the same
// run, writes bench/results/<date>.json and its table beside it (<date>.md).
import { join } from "node:path";
// @ts-expect-error: a plain ES module script without type declarations
import { buildServices } from "../scripts/build-services.mjs";
import { parseBenchArgs } from "./lib/args.js";
import { ROOT } from "./lib/procs.js";
import { type Report, resultsTable, writeResults } from "./lib/report.js";
import type { BenchResult, Suite } from "./lib/suite.js";
import { machineInfo } from "./lib/system.js";
import { chatCompletionsSuite } from "./suites/chat-completions.js";
import { concurrentRunsSuite } from "./suites/concurrent-runs.js";
import { deliverySuite } from "./suites/delivery.js";
import { fanOutSuite } from "./suites/fan-out.js";
import { idleConnectionsSuite } from "./suites/idle-connections.js";
import { inboundSuite } from "./suites/inbound.js";
import { memorySuite } from "./suites/memory.js";
import { modelFallbackSuite } from "./suites/model-fallback.js";
import { runEventsSuite } from "./suites/run-events.js";
import { sessionsScaleSuite } from "./suites/sessions-scale.js";
import { soakSuite } from "./suites/soak.js";
import { streamsSuite } from "./suites/streams.js";
import { tracingSuite } from "./suites/tracing.js";
import { wsRpcSuite } from "./suites/ws-rpc.js";

// Idle connections last: it leaves the most sockets in TIME_WAIT behind.
const SUITES: Suite[] = [
  memorySuite,
  wsRpcSuite,
  tracingSuite,
  chatCompletionsSuite,
  modelFallbackSuite,
  deliverySuite,
  inboundSuite,
  fanOutSuite,
  concurrentRunsSuite,
  streamsSuite,
  sessionsScaleSuite,
  idleConnectionsSuite,
  soakSuite,
  runEventsSuite,
];
// A hung suite must not hold the machine: the whole run stops by itself (a soak adds its length).
const RUN_DEADLINE_MS = 25 * 60_000;

const selected = (suite: Suite, only: string[]) =>
  only.length === 0 ? suite.optIn !== true : only.some((name) => suite.name.includes(name));

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  const started = performance.now();
  const machine = machineInfo();
  const log = (line: string) => console.log(line);
  const suites = SUITES.filter((suite) => selected(suite, args.only));
  const deadlineMs = RUN_DEADLINE_MS + (suites.includes(soakSuite) ? args.soakSeconds * 1000 : 0);
  const deadline = setTimeout(() => {
    console.error(`bench: the run took longer than ${Math.round(deadlineMs / 60_000)} minutes; giving up`);
    process.exit(2);
  }, deadlineMs);
  deadline.unref();

  if (process.env.GW_BENCH_BUILD) {
    // Another commit's build (`bench/ab.ts` makes them in its worktrees): this checkout's suites against it.
    process.env.GW_SERVICE_BUILD = process.env.GW_BENCH_BUILD;
    log(`gateway: the compiled build in ${process.env.GW_BENCH_BUILD} (GW_BENCH_BUILD)`);
  } else if (!args.source) {
    // Production runs compiled JavaScript (no TypeScript loader): so does the gateway measured.
    const dir = join(ROOT, "bench", "results", "tmp", "dist");
    await buildServices(dir, ROOT);
    process.env.GW_SERVICE_BUILD = dir;
    log(`gateway: the compiled build in ${dir}`);
  } else {
    log("gateway: the TypeScript source through tsx (--source)");
  }
  const results: BenchResult[] = [];
  for (const suite of suites) {
    log(`== ${suite.name}`);
    try {
      results.push(...(await suite.run({ args, log })));
    } catch (err) {
      results.push({ bench: suite.name, status: "failed", reason: (err as Error).message.split("\n")[0]! });
      log(`  failed: ${(err as Error).message}`);
    }
  }
  const report: Report = {
    date: new Date().toISOString(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
    quick: args.quick,
    durationSeconds: Math.round((performance.now() - started) / 1000),
    machine,
    results,
  };
  log(`\n${resultsTable(report)}\n`);
  log(`results: ${writeResults(report)} (and its table, .md)`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
