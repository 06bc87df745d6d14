import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BatchedLineWriter } from "./batched-line-writer.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs a script that logs through a service logger (stdout) and ends as given. */
function runLogging(ending: string): { status: number | null; stdout: string; stderr: string } {
  const script = [
    'import { createLogger } from "./libs/runtime/src/logger.ts";',
    'const logger = createLogger({ service: "exit-test" });',
    ending,
  ].join("\n");
  return spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
}

const loggedNumbers = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { i: number }).i);

describe("BatchedLineWriter", () => {
  it("hands the lines of one window to the sink as one write, in order, and later lines apart", async () => {
    const writes: string[] = [];
    const writer = new BatchedLineWriter({ write: (data) => writes.push(data) }, { maxDelayMs: 30 });
    writer.write("a\n");
    await sleep(5);
    writer.write("b\n");
    expect(writes).toEqual([]);
    await sleep(60);
    expect(writes).toEqual(["a\nb\n"]);
    writer.write("c\n");
    await sleep(60);
    expect(writes).toEqual(["a\nb\n", "c\n"]);
  });

  it("hands a large batch over at once", () => {
    const writes: string[] = [];
    const writer = new BatchedLineWriter({ write: (data) => writes.push(data) }, { maxChars: 10 });
    writer.write("12345\n");
    expect(writes).toEqual([]);
    writer.write("67890\n");
    expect(writes).toEqual(["12345\n67890\n"]);
    writer.flush();
    expect(writes).toHaveLength(1);
  });

  it("flushSync flushes the sink, then hands over what waits (written to its descriptor when it has one)", () => {
    const calls: string[] = [];
    const writer = new BatchedLineWriter({ write: (data) => calls.push(`write ${data}`), flushSync: () => calls.push("flushSync") });
    writer.write("x\n");
    writer.flushSync();
    expect(calls).toEqual(["flushSync", "write x\n"]);

    const file = join(mkdtempSync(join(tmpdir(), "batched-")), "out.log");
    const fd = openSync(file, "w");
    try {
      const direct = new BatchedLineWriter({ fd, write: () => calls.push("async write"), flushSync: () => undefined });
      direct.write("y\n");
      direct.flushSync();
      expect(readFileSync(file, "utf8")).toBe("y\n");
      expect(calls).not.toContain("async write");
    } finally {
      closeSync(fd);
    }
  });

  it("loses no line written just before process.exit()", () => {
    const run = runLogging('for (let i = 0; i < 2000; i++) logger.info({ i }, "last words");\nprocess.exit(0);');
    expect(run.status).toBe(0);
    expect(loggedNumbers(run.stdout)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
  });

  it("loses no line when the event loop runs dry (pino ends stdout at beforeExit)", () => {
    const run = runLogging('setTimeout(() => { for (let i = 0; i < 3; i++) logger.info({ i }, "last words"); }, 10);');
    expect(run.status).toBe(0);
    expect(run.stderr).not.toContain("destroyed");
    expect(loggedNumbers(run.stdout)).toEqual([0, 1, 2]);
  });
});
