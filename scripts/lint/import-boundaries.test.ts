import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const repoRoot = new URL("../..", import.meta.url).pathname;
// The repository's own eslint.config.js, as `npm test` runs it, without its type-aware rules:
// the fixtures below are no files of any tsconfig project, and the boundaries need no types.
const eslint = new ESLint({
  cwd: repoRoot,
  overrideConfig: {
    languageOptions: { parserOptions: { projectService: false } },
    rules: { "@typescript-eslint/no-floating-promises": "off", "@typescript-eslint/no-misused-promises": "off" },
  },
});

/** The import-boundary messages for `code` linted as if it lived at `file`. */
async function boundaryErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${repoRoot}${file}` });
  return result!.messages.filter((m) => m.ruleId === "gw/import-boundaries").map((m) => m.message);
}

describe("gw/import-boundaries, as configured in eslint.config.js", () => {
  it("refuses a library importing a service, by package name or by path", async () => {
    expect(await boundaryErrors("libs/bus/src/fixture.ts", 'import { startEdge } from "@gw/edge";\nexport { startEdge };\n')).toEqual([
      "a library must not import a service (@gw/edge): services depend on libraries, never the reverse",
    ]);
    expect(await boundaryErrors("libs/runs/src/fixture.ts", 'export * from "../../../services/sessions/src/service.js";\n')).toEqual([
      "a library must not import a service (../../../services/sessions/src/service.js): services depend on libraries, never the reverse",
    ]);
  });

  it("refuses the edge importing a channel plugin, in its code and in its tests", async () => {
    expect(await boundaryErrors("services/edge/src/fixture.ts", 'import "../../delivery/src/channels/telegram/plugin.js";\n')).toEqual([
      "the edge must not import a channel plugin (../../delivery/src/channels/telegram/plugin.js): channel traffic goes to the delivery service over the bus",
    ]);
    expect(await boundaryErrors("services/edge/test/fixture.test.ts", 'const m = await import("@gw/delivery/src/channels/slack/api.js");\nexport { m };\n')).toEqual([
      "the edge must not import a channel plugin (@gw/delivery/src/channels/slack/api.js): channel traffic goes to the delivery service over the bus",
    ]);
  });

  it("refuses production code reaching into another workspace past its package entry", async () => {
    expect(await boundaryErrors("services/gateway/src/fixture.ts", 'export { startEdge } from "@gw/edge/src/edge.js";\n')).toEqual([
      "import @gw/edge (its package entry), not its internals (@gw/edge/src/edge.js)",
    ]);
    expect(await boundaryErrors("services/gateway/src/fixture.ts", 'import { startEdge } from "../../edge/src/edge.js";\nexport { startEdge };\n')).toEqual([
      "import @gw/edge (its package entry), not its internals (../../edge/src/edge.js)",
    ]);
    expect(await boundaryErrors("libs/host/src/fixture.ts", 'export { NatsBus } from "@gw/bus/src/nats-bus.js";\n')).toEqual([
      "import @gw/bus (its package entry), not its internals (@gw/bus/src/nats-bus.js)",
    ]);
  });

  it("refuses test tooling in production code", async () => {
    expect(await boundaryErrors("services/edge/src/fixture.ts", 'import { startNats } from "@gw/testing";\nimport { expect } from "vitest";\nexport { startNats, expect };\n')).toEqual([
      "production code must not import test tooling (@gw/testing)",
      "production code must not import test tooling (vitest)",
    ]);
  });

  it("refuses production code outside libs/runs importing the pieces of the run lifecycle, which it may only use whole", async () => {
    const why = (name: string, workspace: string) =>
      `${name} is how @gw/runs runs the run lifecycle, not for ${workspace}: start, wait for and end runs with its runRequest, registerRun, RunWaiting and endRun`;
    expect(await boundaryErrors("services/delivery/src/fixture.ts", 'import { endRun, publishRunEnd, type RunRegistry } from "@gw/runs";\nexport { endRun, publishRunEnd, type RunRegistry };\n')).toEqual([
      why("publishRunEnd", "services/delivery"),
    ]);
    expect(await boundaryErrors("services/hooks/src/fixture.ts", 'export { inspectRun, RunWait, terminalMessages } from "@gw/runs";\n')).toEqual([
      why("inspectRun", "services/hooks"),
      why("RunWait", "services/hooks"),
      why("terminalMessages", "services/hooks"),
    ]);
    expect(await boundaryErrors("services/edge/src/fixture.ts", 'import { finalRecordMessage } from "@gw/runs";\nexport { finalRecordMessage };\n')).toEqual([
      why("finalRecordMessage", "services/edge"),
    ]);
  });

  it("refuses platform code in libs/channels, the channel port: a platform's names and its kind", async () => {
    const why = (name: string, kind: string) =>
      `libs/channels is the platform-neutral channel port: ${name} names the ${kind} platform, whose code belongs in services/delivery/src/channels/${kind}/`;
    const code = 'export const TelegramSettingsSchema = { kind: "slack" };\nexport const isSignalGroup = (to: string) => to === `imessage`;\n';
    expect(await boundaryErrors("libs/channels/src/fixture.ts", code)).toEqual([
      why("TelegramSettingsSchema", "telegram"),
      why('"slack"', "slack"),
      why("isSignalGroup", "signal"),
      why('"imessage"', "imessage"),
    ]);
    // An AbortSignal is no platform; tests and other workspaces may name platforms freely.
    expect(await boundaryErrors("libs/channels/src/fixture.ts", "export const wait = (signal: AbortSignal) => signal.aborted;\n")).toEqual([]);
    expect(await boundaryErrors("libs/channels/src/fixture.test.ts", code)).toEqual([]);
    expect(await boundaryErrors("libs/config/src/fixture.ts", code)).toEqual([]);
  });

  it("allows package entries, a workspace's own files, a service's own channel plugins and shared test fixtures", async () => {
    const allowed: Array<[string, string]> = [
      ["services/gateway/src/fixture.ts", 'import { startEdge } from "@gw/edge";\nexport { startEdge };\n'],
      ["services/edge/src/fixture.ts", 'import { sessionMethods } from "./methods/sessions.js";\nexport { sessionMethods };\n'],
      ["services/delivery/src/fixture.ts", 'import "./channels/telegram/plugin.js";\n'],
      ["services/edge/src/fixture.test.ts", 'import { startNats } from "@gw/testing";\nexport { startNats };\n'],
      ["libs/store/src/fixture.contract.ts", 'import { startRedis } from "@gw/testing";\nexport { startRedis };\n'],
      ["services/gateway/test/fixture.ts", 'import { fuzzFrame } from "../../edge/test/fuzz-frames.js";\nexport { fuzzFrame };\n'],
      ["libs/host/src/fixture.ts", 'import { createSubjects } from "@gw/bus";\nexport { createSubjects };\n'],
      // A runner publishes the end of the runs it ran; tests fake runners; libs/runs is the lifecycle.
      ["services/agent-runner/src/fixture.ts", 'import { terminalMessages } from "@gw/runs";\nexport { terminalMessages };\n'],
      ["services/edge/src/fixture.test.ts", 'import { terminalMessages } from "@gw/runs";\nexport { terminalMessages };\n'],
      ["libs/runs/src/fixture.ts", 'import { publishRunEnd } from "./agent-events.js";\nexport { publishRunEnd };\n'],
      ["services/delivery/src/fixture.ts", 'import { endRun, RunWaiting, runRequest } from "@gw/runs";\nexport { endRun, RunWaiting, runRequest };\n'],
    ];
    for (const [file, code] of allowed) expect(await boundaryErrors(file, code), file).toEqual([]);
  });
});
