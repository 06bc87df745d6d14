import { execFile } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { envForConfig } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repoRoot = new URL("..", import.meta.url).pathname;
// Inside the repository, so the bundles resolve their packages from its node_modules as the
// image's do from /app/node_modules.
const outdir = join(repoRoot, "dist", `build-test-${process.pid}`);

/** The code a bundle runs at start: the file and every chunk it imports statically, not through import(). */
function startupCode(file: string, seen = new Set<string>()): string {
  if (seen.has(file)) return "";
  seen.add(file);
  const code = readFileSync(file, "utf8");
  const chunks = [...code.matchAll(/^(?:import|export)\s[^;]*?from\s*"(\.[^"]+)"|^import\s*"(\.[^"]+)"/gms)];
  return code + chunks.map((m) => startupCode(join(dirname(file), (m[1] ?? m[2])!), seen)).join("");
}

/** esbuild heads each module's code with a comment naming its source file. */
const moduleMark = (source: string) => `// ${source}\n`;

describe("scripts/build-services.mjs", () => {
  beforeAll(() => run(process.execPath, ["scripts/build-services.mjs", outdir], { cwd: repoRoot }));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it("compiles every service to one JavaScript file that inlines our workspaces and runs under plain node", async () => {
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

  it("requires CommonJS packages rather than importing them, so Node does not lex their source at start", () => {
    const edge = startupCode(join(outdir, "edge.js"));
    for (const name of ["fastify", "pino", "prom-client", "ws", "@nats-io/nats-core", "@nats-io/jetstream"]) {
      expect(edge, name).toContain(`require(${JSON.stringify(name)})`);
      expect(edge, name).not.toMatch(new RegExp(`from\\s*"${name}"`));
    }
    // An ES module package stays an import.
    expect(edge).toMatch(/from\s*"@bufbuild\/protobuf/);
  });

  it("inlines zod without its translations, and its messages stay English", async () => {
    const everything = readdirSync(join(outdir, "chunks"))
      .map((file) => readFileSync(join(outdir, "chunks", file), "utf8"))
      .join("");
    const edge = startupCode(join(outdir, "edge.js"));
    expect(edge).not.toMatch(/from\s*"zod/);
    expect(edge.includes(moduleMark("node_modules/zod/v4/classic/schemas.js"))).toBe(true);
    expect(everything.includes(moduleMark("node_modules/zod/v4/locales/en.js"))).toBe(true);
    for (const locale of ["de", "fr", "ja", "zh-CN"]) expect(everything.includes(moduleMark(`node_modules/zod/v4/locales/${locale}.js`)), locale).toBe(false);
    const bad = join(outdir, "bad.json5");
    writeFileSync(bad, '{ gateway: { port: "x" } }\n');
    const check = await run(process.execPath, [join(outdir, "gateway.js"), "config", "check", "--config", bad], { cwd: repoRoot }).then(
      () => ({ stderr: "" }),
      (err: { stderr: string }) => err,
    );
    expect(check.stderr).toContain("gateway.port: Invalid input: expected number, received string");
  });

  it("leaves out of an edge's start what it loads on first use: the web chat page, the trace exporter, the OpenAI bodies' schemas", () => {
    const lazy = [
      "services/edge/src/http/webchat/gen/assets.ts",
      "libs/host/src/otlp-export.ts",
      "services/edge/src/http/openai/chat-body.ts",
      "services/edge/src/http/openai/responses-body.ts",
      "services/edge/src/http/openai/params.ts",
    ];
    const edge = startupCode(join(outdir, "edge.js"));
    const everything = readdirSync(join(outdir, "chunks"))
      .map((file) => readFileSync(join(outdir, "chunks", file), "utf8"))
      .join("");
    for (const source of lazy) {
      expect(everything.includes(moduleMark(source)), `${source} is built`).toBe(true);
      expect(edge.includes(moduleMark(source)), `${source} is loaded at start`).toBe(false);
    }
    expect(edge.includes(moduleMark("services/edge/src/http/webchat/webchat.ts"))).toBe(true);
    expect(edge.includes(moduleMark("services/edge/src/http/openai/chat-completions.ts"))).toBe(true);
  });
});
