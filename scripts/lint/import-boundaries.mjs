// ESLint rule `gw/import-boundaries`: the dependency directions of the root README, enforced.
//  - a library (libs/*) never imports a service (services/*);
//  - the edge never imports a channel plugin (services/delivery/src/channels/**): inbound and
//    outbound channel traffic reaches the delivery service over the bus;
//  - production code reaches another workspace only through its package entry (`@gw/<name>`),
//    never through a deep path or a relative path into the other workspace's folder;
//  - production code never imports test tooling;
//  - libs/channels, the channel port, holds no platform code (issue 27): its production code names
//    no platform whose plugin lives in services/delivery/src/channels/<kind>/ (an identifier such
//    as TelegramSettingsSchema, or the kind as a string);
//  - production code outside libs/runs starts, waits for and ends runs with the one run lifecycle
//    of @gw/runs (issue 27): it never imports the pieces a copy of it is made of (publishing a
//    run's end, the wait's machine, the runner-death detector); only a runner publishes the
//    terminal event of a run it ran.
// Test code (*.test.ts, *.contract.ts and their contract-helpers.ts, test/ folders) may share fixtures across workspaces but
// obeys the first two.
//
// ESLint rule `gw/upward-imports` (issue 27 §6): inside a service, no import runs upward. Take a
// production module M of services/<name>/src and a relative import of a module T of the same
// src. Let A be the deepest folder holding both, and call the *branch* of a module under A the
// subfolder of A it lies in, or the module itself when it sits in A. The import M -> T is upward
// when T's branch already imports M's branch (any module of the one importing any module of the
// other, type-only imports included), except when M sits in A: a folder's own modules compose
// its subfolders, so an import down the tree is never upward. That leaves two cases:
//  - up the tree: T sits in an ancestor folder of M and imports from the subfolder M lives in,
//    so T is built from it (methods/x.ts importing ../edge.ts, which builds the method table);
//  - across: M and T lie in two sibling subfolders that import each other (the method registry
//    importing the connection, which dispatches to the registry); both imports of such a pair
//    are reported, since either can be the one to go.
// Imports within one folder never are; test code is neither checked nor counted. The check
// itself is in upward-imports.mjs.
// `node scripts/lint/import-boundaries.mjs` prints the upward imports of every service, and
// exits 1 when there is one.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { upwardImports, upwardImportsRule } from "./upward-imports.mjs";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const TEST_ONLY = [/^@gw\/testing(\/|$)/, /^testcontainers(\/|$)/, /^@testcontainers\//, /^vitest(\/|$)/, /^fast-check(\/|$)/];
const CHANNEL_PLUGINS = "services/delivery/src/channels/";
/** @gw/runs names that only the run lifecycle in libs/runs uses, each with who else may. */
const RUN_LIFECYCLE_PARTS = new Map([
  ["publishRunEnd", []],
  ["RunWait", []],
  ["inspectRun", []],
  ["terminalMessages", ["services/agent-runner"]],
  ["finalRecordMessage", ["services/agent-runner"]],
]);

/** Kinds that are also ordinary words: only their capitalised form inside a name counts (not AbortSignal). */
const WORD_KINDS = new Set(["signal"]);

/** The platform kinds that have a plugin: the folders of services/delivery/src/channels with a plugin.ts. */
function platformKinds(root) {
  try {
    return readdirSync(join(root, CHANNEL_PLUGINS), { withFileTypes: true })
      .filter((dir) => dir.isDirectory() && existsSync(join(root, CHANNEL_PLUGINS, dir.name, "plugin.ts")))
      .map((dir) => dir.name.toLowerCase());
  } catch {
    return [];
  }
}

/** The platform `name` (an identifier) names, if any. */
function platformInName(name, kinds) {
  return kinds.find((kind) => (WORD_KINDS.has(kind) ? new RegExp(`${kind[0].toUpperCase()}${kind.slice(1)}(?=[A-Z0-9_])`).test(name) : name.toLowerCase().includes(kind)));
}

/** Visitors reporting platform names in libs/channels' production code. */
function platformNameVisitors(context, kinds) {
  const report = (node, name, kind) => context.report({ node, messageId: "platformCode", data: { name, kind } });
  const literal = (node, text) => {
    const kind = kinds.find((k) => typeof text === "string" && text.trim().toLowerCase() === k);
    if (kind !== undefined) report(node, JSON.stringify(text), kind);
  };
  return {
    Identifier(node) {
      const kind = platformInName(node.name, kinds);
      if (kind !== undefined) report(node, node.name, kind);
    },
    Literal: (node) => literal(node, node.value),
    TemplateElement: (node) => literal(node, node.value.cooked),
  };
}

/** `@gw/<name>` -> `libs/<dir>` or `services/<dir>`, from the workspaces' package.json files. */
function workspacePackages(root) {
  const byName = new Map();
  for (const parent of ["libs", "services"]) {
    for (const dir of readdirSync(join(root, parent), { withFileTypes: true })) {
      if (!dir.isDirectory()) continue;
      try {
        const { name } = JSON.parse(readFileSync(join(root, parent, dir.name, "package.json"), "utf8"));
        byName.set(name, `${parent}/${dir.name}`);
      } catch {
        // A folder without a package.json is not a workspace.
      }
    }
  }
  // Services named in the architecture before their folder exists.
  for (const planned of ["delivery", "hooks"]) if (!byName.has(`@gw/${planned}`)) byName.set(`@gw/${planned}`, `services/${planned}`);
  return byName;
}

/** `libs/bus` and the rest of the path, for a repository-relative path inside a workspace. */
function splitWorkspace(repoPath) {
  const match = /^((?:libs|services)\/[^/]+)(?:\/(.*))?$/.exec(repoPath);
  return match ? { workspace: match[1], inner: match[2] ?? "" } : undefined;
}

/** Tests, contract suites (run by each implementation's tests) and their helpers. */
function isTestFile(inner) {
  return /(^|\/)test\//.test(inner) || /\.(test|contract)\.ts$/.test(inner) || /(^|\/)contract-helpers\.ts$/.test(inner);
}

/** Where an import lands: a workspace and the path inside it, or a third-party package. */
function target(specifier, fromFile, packages, root) {
  if (specifier.startsWith(".")) {
    const landed = relative(root, resolve(dirname(fromFile), specifier)).split(sep).join("/");
    const inWorkspace = splitWorkspace(landed);
    return inWorkspace ? { ...inWorkspace, viaEntry: false, repoPath: landed } : undefined;
  }
  const match = /^(@gw\/[^/]+)(?:\/(.*))?$/.exec(specifier);
  if (match && packages.has(match[1])) {
    const workspace = packages.get(match[1]);
    const inner = match[2] ?? "";
    return { workspace, inner, viaEntry: inner === "", repoPath: inner ? `${workspace}/${inner}` : workspace };
  }
  return { external: specifier };
}

/** The names an import from @gw/runs takes that only the run lifecycle may use. */
function reportRunLifecycleParts(context, node, workspace) {
  for (const spec of node.specifiers ?? []) {
    const name = spec.type === "ImportSpecifier" ? (spec.imported.name ?? spec.imported.value) : spec.type === "ExportSpecifier" ? spec.local.name : undefined;
    const allowedIn = RUN_LIFECYCLE_PARTS.get(name);
    if (allowedIn === undefined || allowedIn.includes(workspace)) continue;
    context.report({ node: spec, messageId: "runLifecycle", data: { name, workspace } });
  }
}

export function createImportBoundariesRule(root = REPO_ROOT) {
  let packages;
  let kinds;
  return {
    meta: {
      type: "problem",
      docs: { description: "keep libraries, services and channel plugins behind their boundaries" },
      schema: [],
      messages: {
        libImportsService: "a library must not import a service ({{target}}): services depend on libraries, never the reverse",
        edgeImportsChannel: "the edge must not import a channel plugin ({{target}}): channel traffic goes to the delivery service over the bus",
        internals: "import {{entry}} (its package entry), not its internals ({{target}})",
        testTooling: "production code must not import test tooling ({{target}})",
        platformCode:
          "libs/channels is the platform-neutral channel port: {{name}} names the {{kind}} platform, whose code belongs in services/delivery/src/channels/{{kind}}/",
        runLifecycle:
          "{{name}} is how @gw/runs runs the run lifecycle, not for {{workspace}}: start, wait for and end runs with its runRequest, registerRun, RunWaiting and endRun",
      },
    },
    create(context) {
      packages ??= workspacePackages(root);
      const filename = context.filename ?? context.getFilename();
      const from = splitWorkspace(relative(root, filename).split(sep).join("/"));
      if (from === undefined) return {};
      // libs/testing is test tooling through and through.
      const production = from.workspace !== "libs/testing" && !isTestFile(from.inner);
      const check = (node) => {
        const specifier = node.source?.value;
        if (typeof specifier !== "string") return;
        const to = target(specifier, filename, packages, root);
        if (to === undefined) return;
        const report = (messageId, data) => context.report({ node: node.source, messageId, data: { target: specifier, ...data } });
        if (to.external !== undefined) {
          if (production && TEST_ONLY.some((p) => p.test(to.external))) report("testTooling");
          return;
        }
        if (to.workspace === from.workspace) return;
        if (production && to.workspace === "libs/runs") reportRunLifecycleParts(context, node, from.workspace);
        if (production && to.workspace === "libs/testing") return report("testTooling");
        if (from.workspace === "services/edge" && `${to.repoPath}/`.startsWith(CHANNEL_PLUGINS)) return report("edgeImportsChannel");
        if (from.workspace.startsWith("libs/") && to.workspace.startsWith("services/")) return report("libImportsService");
        if (production && !to.viaEntry) {
          const entry = [...packages].find(([, dir]) => dir === to.workspace)?.[0] ?? to.workspace;
          report("internals", { entry });
        }
      };
      const imports = {
        ImportDeclaration: check,
        ExportNamedDeclaration: check,
        ExportAllDeclaration: check,
        ImportExpression: check,
      };
      if (from.workspace !== "libs/channels" || !production) return imports;
      kinds ??= platformKinds(root);
      return { ...imports, ...platformNameVisitors(context, kinds) };
    },
  };
}

export const createUpwardImportsRule = (root = REPO_ROOT) => upwardImportsRule(root, isTestFile);

/** Every upward import of every service, as `service: module -> target (how)` lines, and a count per service. */
export const upwardImportReport = (root = REPO_ROOT) => upwardImports(root, isTestFile);

export default {
  rules: { "import-boundaries": createImportBoundariesRule(), "upward-imports": createUpwardImportsRule() },
};

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { lines, counts } = upwardImportReport();
  for (const line of lines) console.log(line);
  console.log([...counts].map(([service, count]) => `${service} ${count}`).join(", "), "upward imports");
  process.exitCode = lines.length > 0 ? 1 : 0;
}
