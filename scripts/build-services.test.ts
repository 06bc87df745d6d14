import { execFile } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { envForConfig } from "@gw/testing";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repoRoot = new URL("..", import.meta.url).pathname;
// Inside the repository, so the bundles resolve their packages from its node_modules as the
// image's do from /app/node_modules.
const outdir = join(repoRoot, "dist", `build-test-${process.pid}`);

describe("scripts/build-services.mjs", () => {
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it("compiles every service to one JavaScript file that inlines our workspaces and runs under plain node", async () => {
    await run(process.execPath, ["scripts/build-services.mjs", outdir], { cwd: repoRoot });
    const services = readdirSync(join(repoRoot, "services")).filter((name) =>
      readdirSync(join(repoRoot, "services", name, "src")).includes("main.ts"),
    );
    const built = readdirSync(outdir).filter((file) => file.endsWith(".js"));
    expect(built.sort()).toEqual([...services, "gateway"].map((name) => `${name}.js`).sort());
    for (const file of built) {
      const code = readFileSync(join(outdir, file), "utf8");
      expect(code, file).not.toMatch(/from\s+["']@gw\//);
      expect(code, file).not.toMatch(/from\s+["']tsx/);
    }
    // No TypeScript loader: plain node runs the compiled CLI.
    const { stdout } = await run(
      process.execPath,
      [join(outdir, "gateway.js"), "config", "check", "--config", "config/gateway.example.json5"],
      {
        cwd: repoRoot,
        env: { PATH: process.env.PATH, ...envForConfig(join(repoRoot, "config/gateway.example.json5")) },
      },
    );
    expect(stdout).toMatch(/OK/);
    // The operator commands are in the image too (Dockerfile: /usr/local/bin/gateway runs this file).
    const help = await run(process.execPath, [join(outdir, "gateway.js"), "devices", "--help"], { cwd: repoRoot });
    expect(help.stdout).toMatch(/pending \[options\]/);
  });
});
