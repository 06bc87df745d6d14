import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./procs.js";
import type { BenchResult } from "./suite.js";

export interface Report {
  date: string;
  command: string;
  quick: boolean;
  durationSeconds: number;
  machine: Record<string, unknown>;
  results: BenchResult[];
}

/**
 * Writes bench/results/<date>.json and, beside it, <date>.md with the run's table (one pair per
 * run; quick runs are marked in the name). bench/README.md keeps one current table, written by
 * hand from such runs with their ranges over rounds; the runs themselves are the history.
 */
export function writeResults(report: Report): string {
  const dir = join(ROOT, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const stamp = `${report.date.replace(/[:.]/g, "-")}${report.quick ? "-quick" : ""}`;
  const path = join(dir, `${stamp}.json`);
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(dir, `${stamp}.md`), `${resultsTable(report)}\n`);
  return path;
}

const cell = (value: number) => (Number.isFinite(value) ? String(value) : "-");

/** The markdown table the README shows, one row per figure or missing benchmark. */
export function resultsTable(report: Report): string {
  const m = report.machine;
  const lines = [
    `Run ${report.date} with \`${report.command}\` (${report.durationSeconds} s) on ${m.cpus} CPU(s)` +
      ` (${m.cpuModel}), Node ${m.node}, load average ${m.loadAverage1m} at start, open-file limit` +
      ` ${m.openFileLimit}, commit ${m.commit || "?"}.`,
    "",
    "| benchmark | figure | gateway | baseline | ratio | target | pass |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const r of report.results) {
    if (r.status !== "ok") {
      lines.push(`| ${r.bench} | ${r.status}: ${r.reason.replace(/\|/g, "/")} | | | | | |`);
      continue;
    }
    for (const f of r.figures) {
      const pass = f.pass === null ? "" : f.pass ? "yes" : "**no**";
      lines.push(
        `| ${r.bench} | ${f.name} (${f.unit}) | ${cell(f.gateway)} | ${cell(f.baseline)} | ${cell(f.ratio)} | ${f.target} | ${pass} |`,
      );
    }
  }
  return lines.join("\n");
}
