// Compiles each service's entry point to one JavaScript file in dist/ (code shared between
// them and code loaded on demand in dist/chunks/), so the images run plain `node
// dist/<service>.js` with no TypeScript loader in production. Workspace code (@gw/*) is inlined; every other package stays an ordinary import resolved from node_modules, which the
// image installs with `npm ci --omit=dev`.
//   node scripts/build-services.mjs [outdir]
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
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
 * Packages a workspace needs in a version other than the one npm hoists to the root
 * node_modules (the image's only one, its workspaces' own folders are not copied): they are
 * inlined from the workspace's node_modules. commander 14 for the gateway CLI, where the root
 * holds a dev tool's commander 2.
 */
const INLINED = new Set(["commander"]);

/** Bare imports other than our workspaces stay imports: node_modules holds them at run time. */
const keepPackagesExternal = {
  name: "keep-packages-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith("@gw/") || INLINED.has(args.path) ? undefined : { path: args.path, external: true },
    );
  },
};

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
    plugins: [keepPackagesExternal],
    banner: { js: REQUIRE_BANNER },
  });
  return Object.keys(entryPoints).map((name) => join(outdir, `${name}.js`));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const files = await buildServices(process.argv[2] ?? "dist");
  console.log(`built ${files.join(", ")}`);
}
