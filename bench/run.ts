// `npm run bench [-- --quick] [--only ws-rpc,idle] [--seconds N] [--connections N] [--no-readme]`
// Starts everything it needs, runs every benchmark against a raw baseline measured in the same
// run, writes bench/results/<date>.json and the table in bench/README.md.
import { parseBenchArgs } from "./lib/args.js";
import { type Report, resultsTable, updateReadme, writeResults } from "./lib/report.js";
import type { BenchResult, Suite } from "./lib/suite.js";
import { machineInfo } from "./lib/system.js";
import { chatCompletionsSuite } from "./suites/chat-completions.js";
import { concurrentRunsSuite } from "./suites/concurrent-runs.js";
import { deliverySuite } from "./suites/delivery.js";
import { fanOutSuite } from "./suites/fan-out.js";
import { idleConnectionsSuite } from "./suites/idle-connections.js";
import { inboundSuite } from "./suites/inbound.js";
import { wsRpcSuite } from "./suites/ws-rpc.js";

// Idle connections last: it leaves the most sockets in TIME_WAIT behind.
const SUITES: Suite[] = [wsRpcSuite, chatCompletionsSuite, deliverySuite, inboundSuite, fanOutSuite, concurrentRunsSuite, idleConnectionsSuite];
// A hung suite must not hold the machine: the whole run stops by itself.
const RUN_DEADLINE_MS = 9 * 60_000;

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  const started = performance.now();
  const machine = machineInfo();
  const log = (line: string) => console.log(line);
  const deadline = setTimeout(() => {
    console.error("bench: the run took longer than 9 minutes; giving up");
    process.exit(2);
  }, RUN_DEADLINE_MS);
  deadline.unref();

  const results: BenchResult[] = [];
  for (const suite of SUITES) {
    if (args.only.length > 0 && !args.only.some((name) => suite.name.includes(name))) continue;
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
  log(`results: ${writeResults(report)}`);
  if (args.readme) {
    updateReadme(report);
    log("table written to bench/README.md");
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
