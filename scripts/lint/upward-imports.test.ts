import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ESLint, Linter } from "eslint";
import tseslint from "typescript-eslint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUpwardImportsRule, upwardImportReport } from "./import-boundaries.mjs";

const repoRoot = new URL("../..", import.meta.url).pathname;

/**
 * A service laid out like the edge: a composition root built from its folders, a folder (ws/)
 * that dispatches to another (methods/), a leaf beside the root that both use, and a nested
 * folder (http/openai/) below its parent's routes.
 */
const TREE: Record<string, string> = {
  "services/svc/src/main.ts": 'import { startSvc } from "./svc.js";\nstartSvc();\n',
  "services/svc/src/svc.ts": 'import { methods } from "./methods/table.js";\nimport { listen } from "./ws/socket.js";\nexport const startSvc = () => listen(methods);\n',
  "services/svc/src/call-context.ts": "export interface CallContext { id: string }\n",
  "services/svc/src/methods/table.ts": 'import type { CallContext } from "../call-context.js";\nexport const methods = (ctx: CallContext) => ctx.id;\n',
  "services/svc/src/methods/registry.ts": "export const dispatch = (name: string) => name;\n",
  "services/svc/src/ws/socket.ts": 'import { dispatch } from "../methods/registry.js";\nexport const listen = (m: unknown) => [m, dispatch];\n',
  "services/svc/src/http/routes.ts": 'import { openai } from "./openai/plugin.js";\nexport const routes = [openai];\nexport const bearer = 1;\n',
  "services/svc/src/http/openai/plugin.ts": "export const openai = 1;\n",
  "services/svc/src/methods/table.test.ts": 'import { startSvc } from "../svc.js";\nexport { startSvc };\n',
};

let root: string;
let linter: Linter;

/** The upward-import messages for `code` linted as if it lived at `file` of the fixture tree. */
function upward(file: string, code: string): string[] {
  const config = [
    {
      files: ["**/*.ts"],
      languageOptions: { parser: tseslint.parser },
      plugins: { gw: { rules: { "upward-imports": createUpwardImportsRule(root) } } },
      rules: { "gw/upward-imports": "error" as const },
    },
  ];
  return linter.verify(code, config, { filename: join(root, file) }).map((m) => m.message);
}

const why = (how: string, target: string, theirs: string, ours: string) =>
  `upward import (${how}): ${target} belongs to ${theirs}, which imports ${ours}; move what both need below them (scripts/lint/import-boundaries.mjs)`;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "gw-upward-"));
  for (const [file, text] of Object.entries(TREE)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  linter = new Linter({ configType: "flat", cwd: root });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("gw/upward-imports", () => {
  it("refuses a module importing what is built from its own folder, up the tree", () => {
    expect(upward("services/svc/src/methods/fixture.ts", 'import { startSvc } from "../svc.js";\nexport { startSvc };\n')).toEqual([
      why("up the tree", "../svc.js", "svc.ts", "methods/"),
    ]);
    // Type-only imports count, and so do re-exports and dynamic imports.
    expect(upward("services/svc/src/http/openai/fixture.ts", 'export type { bearer } from "../routes.js";\nconst m = await import("../routes.js");\nexport { m };\n')).toEqual([
      why("up the tree", "../routes.js", "http/routes.ts", "http/openai/"),
      why("up the tree", "../routes.js", "http/routes.ts", "http/openai/"),
    ]);
  });

  it("refuses a module importing a sibling folder that imports its own folder, across", () => {
    expect(upward("services/svc/src/methods/fixture.ts", 'import type { listen } from "../ws/socket.js";\nexport type { listen };\n')).toEqual([
      why("across", "../ws/socket.js", "ws/", "methods/"),
    ]);
  });

  it("allows a folder's own modules, imports down the tree, shared leaves, one-way siblings, tests and other workspaces", () => {
    const allowed: Array<[string, string]> = [
      ["services/svc/src/methods/fixture.ts", 'import { dispatch } from "./registry.js";\nexport { dispatch };\n'],
      ["services/svc/src/fixture.ts", 'import { methods } from "./methods/table.js";\nexport { methods };\n'],
      ["services/svc/src/ws/fixture.ts", 'import type { CallContext } from "../call-context.js";\nexport type { CallContext };\n'],
      ["services/svc/src/ws/fixture.ts", 'import { dispatch } from "../methods/registry.js";\nexport { dispatch };\n'],
      ["services/svc/src/methods/fixture.test.ts", 'import { startSvc } from "../svc.js";\nexport { startSvc };\n'],
      ["libs/lib/src/inner/fixture.ts", 'import { x } from "../index.js";\nexport { x };\n'],
    ];
    for (const [file, code] of allowed) expect(upward(file, code), file).toEqual([]);
  });

  it("reports every upward import of every service, as the script prints them", () => {
    writeFileSync(join(root, "services/svc/src/methods/bad.ts"), 'import { startSvc } from "../svc.js";\nexport { startSvc };\n');
    try {
      expect(upwardImportReport(root).lines).toEqual(["svc: methods/bad.ts -> svc.ts (up the tree)"]);
    } finally {
      rmSync(join(root, "services/svc/src/methods/bad.ts"));
    }
  });
});

describe("gw/upward-imports, as configured in eslint.config.js", () => {
  const eslint = new ESLint({
    cwd: repoRoot,
    overrideConfig: {
      languageOptions: { parserOptions: { projectService: false } },
      rules: { "@typescript-eslint/no-floating-promises": "off", "@typescript-eslint/no-misused-promises": "off" },
    },
  });

  it("refuses the edge's methods importing the edge that builds their table", async () => {
    const [result] = await eslint.lintText('import { startEdge } from "../edge.js";\nexport { startEdge };\n', {
      filePath: `${repoRoot}services/edge/src/methods/fixture.ts`,
    });
    expect(result!.messages.filter((m) => m.ruleId === "gw/upward-imports").map((m) => m.message)).toEqual([
      why("up the tree", "../edge.js", "edge.ts", "methods/"),
    ]);
  });
});
