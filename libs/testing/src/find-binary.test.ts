import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findBinary } from "./find-binary.js";

describe("findBinary", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it("finds an executable in a PATH directory and skips non-executables", async () => {
    const a = await mkdtemp(join(tmpdir(), "gw-which-a-"));
    const b = await mkdtemp(join(tmpdir(), "gw-which-b-"));
    dirs.push(a, b);
    await writeFile(join(a, "tool"), "not executable");
    await writeFile(join(b, "tool"), "#!/bin/sh\n");
    await chmod(join(b, "tool"), 0o755);
    expect(findBinary("tool", [a, b].join(delimiter))).toBe(join(b, "tool"));
  });

  it("returns undefined when nothing matches", () => {
    expect(findBinary("definitely-not-installed-gw", "/nonexistent")).toBeUndefined();
  });
});
