// Compiles each service's entry point to one JavaScript file in dist/ (code shared between
// them and code loaded on demand in dist/chunks/), so the images run plain `node
// dist/<service>.js` with no TypeScript loader in production. Workspace code (@gw/*) is inlined; every other package is loaded from node_modules at run time (CommonJS ones with `require`), which the
// image installs with `npm ci --omit=dev`.
//   node scripts/build-services.mjs [outdir]
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

/** `services/<name>/src/main.ts` for every service, and the embedded gateway's CLI. */
export function serviceEntryPoints(root = ".") {
  const entries = {};
  for (const name of readdirSync(join(root, "services")).sort()) {
    const main = join(root, "services", name, "src", "main.ts");
    if (existsSync(main)) entries[name] = main;
  }
  entries.gateway = join(root, "services", "gateway", "src", "cli.ts");
  return entries;
}

/**
 * Packages inlined into the bundle rather than loaded from node_modules:
 * - commander 14 for the gateway CLI: a workspace needs it in a version other than the one npm
 *   hoists to the root node_modules (the image's only one), where a dev tool's commander 2 sits.
 * - zod: loaded from node_modules, its `z` namespace imports every one of its 48 locales'
 *   messages (half a megabyte of source each process keeps); inlined, `zodWithoutLocales`
 *   leaves them out (docs/decisions.md, Runtime).
 */
const INLINED = new Set(["commander", "zod"]);

/**
 * zod's `z.locales` (the translations of its error messages into other languages) as an empty
 * namespace: the gateway's messages are English, which zod registers from `locales/en.js` on
 * its own. The MCP SDK, loaded only when an agent has MCP servers, brings its own zod.
 */
function zodWithoutLocales() {
  return {
    name: "zod-without-locales",
    setup(b) {
      b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
        /node_modules[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer) ? { path: args.path, namespace: "zod-no-locales" } : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: "zod-no-locales" }, () => ({ contents: "export {};", loader: "js" }));
    },
  };
}

/** The package a bare specifier names: `@scope/name` or `name`. */
function packageOf(specifier) {
  return specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");
}

/**
 * Whether a package is CommonJS (its package.json does not say `"type": "module"`) and the
 * specifier resolves to a CommonJS file. A CommonJS package's ES wrapper (ws has one) is passed
 * over too: Node would lex the CommonJS it wraps.
 */
function loadsAsCommonJs(specifier, requireFromRoot, root) {
  const manifestPath = join(root, "node_modules", packageOf(specifier), "package.json");
  if (!existsSync(manifestPath) || JSON.parse(readFileSync(manifestPath, "utf8")).type === "module") return false;
  const file = requireFromRoot.resolve(specifier);
  return file.endsWith(".js") || file.endsWith(".cjs");
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Bare imports other than our workspaces stay outside the bundle: node_modules holds them at run
 * time. A CommonJS package is loaded with `require`, not `import`: importing one from an ES module
 * makes Node 20 run its CommonJS export lexer over the package's files, which gets hot enough at
 * start-up that the optimizing compiler compiles it several times in worker threads, and glibc
 * keeps what those compilations freed: 5-7 MiB of every idle process's RSS (docs/decisions.md,
 * Runtime). Each import of one becomes a small module that requires it and re-exports what it
 * exports (read here, by requiring it once); a package that cannot be required here stays an import.
 */
function packagesPlugin(root) {
  const requireFromRoot = createRequire(join(resolve(root), "package.json"));
  const exportsOf = new Map();
  const commonJsExports = (specifier) => {
    if (!exportsOf.has(specifier)) {
      let names;
      try {
        if (loadsAsCommonJs(specifier, requireFromRoot, root)) names = Object.keys(requireFromRoot(specifier));
      } catch {
        names = undefined;
      }
      exportsOf.set(specifier, names?.filter((key) => IDENTIFIER.test(key) && key !== "default"));
    }
    return exportsOf.get(specifier);
  };
  return {
    name: "packages",
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith("@gw/") || INLINED.has(args.path)) return undefined;
        if (args.namespace === "commonjs-package" || isBuiltin(args.path) || commonJsExports(args.path) === undefined)
          return { path: args.path, external: true };
        return { path: args.path, namespace: "commonjs-package" };
      });
      b.onLoad({ filter: /.*/, namespace: "commonjs-package" }, (args) => {
        const names = commonJsExports(args.path);
        const lines = [`const m = require(${JSON.stringify(args.path)});`, "export default m;"];
        names.forEach((key, i) => lines.push(`const x${i} = m[${JSON.stringify(key)}];`, `export { x${i} as ${key} };`));
        return { contents: lines.join("\n"), loader: "js", resolveDir: resolve(root) };
      });
    },
  };
}

/** Inlined CommonJS packages `require` Node's modules; an ES module has no `require` of its own. */
const REQUIRE_BANNER = 'import { createRequire as __gwCreateRequire } from "node:module";\nconst require = __gwCreateRequire(import.meta.url);';

export async function buildServices(outdir = "dist", root = ".") {
  const entryPoints = serviceEntryPoints(root);
  await build({
    entryPoints,
    outdir,
    bundle: true,
    platform: "node",
    format: "esm",
    // Code a process loads only when configured (trace export, a YAML config, MCP clients...)
    // is imported with import(): with splitting it lands in a chunk of its own, and so do the
    // packages it imports, so a process that never takes that path never loads them.
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    target: "node20.19",
    sourcemap: true,
    logLevel: "warning",
    plugins: [zodWithoutLocales(), packagesPlugin(root)],
    banner: { js: REQUIRE_BANNER },
  });
  return Object.keys(entryPoints).map((name) => join(outdir, `${name}.js`));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const files = await buildServices(process.argv[2] ?? "dist");
  console.log(`built ${files.join(", ")}`);
}
