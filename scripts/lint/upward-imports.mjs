// The check behind `gw/upward-imports` and the report of `node scripts/lint/import-boundaries.mjs`:
// what "upward" means is written at the head of import-boundaries.mjs. Module imports are read
// from the files' text (relative specifiers only), so the check needs no type information.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** Relative imports and re-exports of a module's text, static or dynamic, side-effect ones too. */
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

/** What one module imports inside its service, as absolute paths, and the production modules under a folder. */
function moduleGraph(isTestFile) {
  const importsOf = new Map();
  const modulesUnder = new Map();
  const resolveModule = (fromFile, specifier) => {
    const path = resolve(dirname(fromFile), specifier);
    for (const candidate of [path.replace(/\.js$/, ".ts"), path, `${path}.ts`, join(path, "index.ts")]) {
      if (candidate.endsWith(".ts") && existsSync(candidate)) return candidate;
    }
    return path;
  };
  const imports = (file) => {
    const mtime = statSync(file, { throwIfNoEntry: false })?.mtimeMs;
    const known = importsOf.get(file);
    if (known && known.mtime === mtime) return known.targets;
    const text = mtime === undefined ? "" : readFileSync(file, "utf8");
    const targets = [...text.matchAll(RELATIVE_IMPORT)].map((m) => resolveModule(file, m[1]));
    importsOf.set(file, { mtime, targets });
    return targets;
  };
  const modules = (dir) => {
    if (!modulesUnder.has(dir)) {
      const found = [];
      const walk = (d) => {
        for (const entry of readdirSync(d, { withFileTypes: true })) {
          if (entry.name === "node_modules" || entry.name === "gen") continue;
          const path = join(d, entry.name);
          if (entry.isDirectory()) walk(path);
          else if (entry.name.endsWith(".ts") && !isTestFile(path.split(sep).join("/"))) found.push(path);
        }
      };
      if (existsSync(dir)) walk(dir);
      modulesUnder.set(dir, found);
    }
    return modulesUnder.get(dir);
  };
  return { imports, modules, resolveModule };
}

/** The branch of `file` under folder `a`: the subfolder of `a` it lies in (with a trailing separator), or the file itself. */
function branchUnder(a, file) {
  const rest = relative(a, file).split(sep);
  return rest.length > 1 ? join(a, rest[0]) + sep : file;
}

/** The deepest folder holding both files. */
function commonFolder(a, b) {
  let common = dirname(a);
  while (!b.startsWith(common + sep)) common = dirname(common);
  return common;
}

const inBranch = (branch, file) => (branch.endsWith(sep) ? file.startsWith(branch) : file === branch);

/** "up the tree" or "across" when the import of `to` by `from` (absolute paths, one service's src) runs upward. */
function upwardImport(graph, from, to) {
  const fromDir = dirname(from);
  const toDir = dirname(to);
  if (fromDir === toDir || toDir.startsWith(fromDir + sep)) return undefined;
  const common = commonFolder(from, to);
  const fromBranch = branchUnder(common, from);
  const toBranch = branchUnder(common, to);
  const toModules = toBranch.endsWith(sep) ? graph.modules(toBranch) : [to];
  const leansBack = toModules.some((module) => graph.imports(module).some((target) => inBranch(fromBranch, target)));
  if (!leansBack) return undefined;
  return toBranch.endsWith(sep) ? "across" : "up the tree";
}

/** The `src` folder of the service `file` (absolute) is a production module of, or undefined. */
function serviceSrc(root, file, isTestFile) {
  const match = /^services\/[^/]+\/src\/(.*)$/.exec(relative(root, file).split(sep).join("/"));
  if (match === null || isTestFile(match[1])) return undefined;
  return join(root, relative(root, file).split(sep).slice(0, 3).join(sep));
}

/** The `gw/upward-imports` rule for the services under `root`; `isTestFile` tells test code by its path. */
export function upwardImportsRule(root, isTestFile) {
  let graph;
  return {
    meta: {
      type: "problem",
      docs: { description: "inside a service, no module imports one that is built from it (upward)" },
      schema: [],
      messages: {
        upward:
          "upward import ({{how}}): {{target}} belongs to {{theirs}}, which imports {{ours}}; move what both need below them (scripts/lint/import-boundaries.mjs)",
      },
    },
    create(context) {
      const filename = context.filename ?? context.getFilename();
      const src = serviceSrc(root, filename, isTestFile);
      if (src === undefined) return {};
      graph ??= moduleGraph(isTestFile);
      const check = (node) => {
        const specifier = node.source?.value;
        if (typeof specifier !== "string" || !specifier.startsWith(".")) return;
        const to = graph.resolveModule(filename, specifier);
        if (!to.startsWith(src + sep)) return;
        const how = upwardImport(graph, filename, to);
        if (how === undefined) return;
        const common = commonFolder(filename, to);
        const name = (branch) => relative(src, branch).split(sep).join("/") + (branch.endsWith(sep) ? "/" : "");
        const theirs = name(branchUnder(common, to));
        const ours = name(branchUnder(common, filename));
        context.report({ node: node.source, messageId: "upward", data: { how, target: specifier, theirs, ours } });
      };
      return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
    },
  };
}

/** Every upward import of every service under `root`, as `service: module -> target (how)` lines, and a count per service. */
export function upwardImports(root, isTestFile) {
  const graph = moduleGraph(isTestFile);
  const lines = [];
  const counts = new Map();
  for (const service of readdirSync(join(root, "services"))) {
    const src = join(root, "services", service, "src");
    counts.set(service, 0);
    for (const module of graph.modules(src)) {
      for (const to of graph.imports(module)) {
        if (!to.startsWith(src + sep)) continue;
        const how = upwardImport(graph, module, to);
        if (how === undefined) continue;
        counts.set(service, counts.get(service) + 1);
        lines.push(`${service}: ${relative(src, module)} -> ${relative(src, to)} (${how})`);
      }
    }
  }
  return { lines, counts };
}

