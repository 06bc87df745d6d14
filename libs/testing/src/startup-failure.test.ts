import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StartupError, startNats, startRedis } from "./index.js";

describe("a server that fails to start", () => {
  let dir: string;
  let crashing: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "gw-fake-bin-"));
    crashing = join(dir, "crashing-server");
    await writeFile(
      crashing,
      '#!/bin/sh\necho "starting with $*"\necho "fatal: cannot open config" >&2\nexit 3\n',
    );
    await chmod(crashing, 0o755);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("fails fast with the exit status and the tail of its output", async () => {
    const err = await startRedis({ probe: { findBinary: () => crashing } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartupError);
    const message = (err as StartupError).message;
    expect(message).toMatch(/redis-server on port \d+ exited unexpectedly \(code 3/);
    expect(message).toContain("fatal: cannot open config");
    expect(message).toContain("--save");
  });

  it("does not leave the temp store dir behind", async () => {
    const err = (await startNats({ probe: { findBinary: () => crashing } }).catch(
      (e: unknown) => e,
    )) as Error;
    const storeDir = /-sd (\S+)/.exec(err.message)?.[1];
    expect(storeDir).toBeDefined();
    expect(existsSync(storeDir ?? "")).toBe(false);
  });
});
