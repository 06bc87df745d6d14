import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
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

const START = "<!-- results:start -->";
const END = "<!-- results:end -->";

/** Writes bench/results/<date>.json (one file per run; quick runs are marked in the name). */
export function writeResults(report: Report): string {
  const dir = join(ROOT, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const stamp = report.date.replace(/[:.]/g, "-");
  const path = join(dir, `${stamp}${report.quick ? "-quick" : ""}.json`);
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
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

/** Replaces the table between the README's result markers, keeping the prose around it. */
export function updateReadme(report: Report): void {
  const path = join(ROOT, "bench", "README.md");
  const text = readFileSync(path, "utf8");
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start === -1 || end === -1) throw new Error(`${path} has no ${START} ... ${END} markers`);
  const table = resultsTable(report);
  writeFileSync(path, `${text.slice(0, start + START.length)}\n${table}\n${text.slice(end)}`);
}
