// Generates libs/contracts/src/gen from proto/ with protoc (Debian's protobuf-compiler) and
// the ts-proto plugin from node_modules: no download at build time.
//   node scripts/gen-proto.mjs [outDir]   (default: libs/contracts/src/gen)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const OPTIONS = [
  "esModuleInterop=true",
  "importSuffix=.js",
  "env=node",
  "forceLong=number",
  "outputServices=false",
  "useOptionals=none",
  "oneof=unions-value",
  "outputJsonMethods=false",
  "outputPartialMethods=false",
  "unrecognizedEnum=false",
  "removeEnumPrefix=true",
  "fileSuffix=.pb",
];

export function protoFiles(root = "proto") {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".proto")) out.push(relative(root, path));
    }
  };
  walk(root);
  return out.sort();
}

export function generate(outDir) {
  const plugin = "node_modules/.bin/protoc-gen-ts_proto";
  if (!existsSync(plugin)) throw new Error("ts-proto is not installed: run npm ci");
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  try {
    execFileSync(
      "protoc",
      [
        `--plugin=protoc-gen-ts_proto=${plugin}`,
        `--ts_proto_out=${outDir}`,
        `--ts_proto_opt=${OPTIONS.join(",")}`,
        "-I",
        "proto",
        "-I",
        "/usr/include",
        ...protoFiles(),
      ],
      { stdio: "inherit" },
    );
  } catch (err) {
    if (err.code === "ENOENT") {
      throw new Error("protoc not found: install Debian's protobuf-compiler and libprotobuf-dev", { cause: err });
    }
    throw err;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  generate(process.argv[2] ?? "libs/contracts/src/gen");
}
