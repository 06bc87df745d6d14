// Proves the checked-in generated files are current: regenerate into a temp dir and compare
// byte for byte. The ts-proto output (libs/contracts/src/gen, `npm run proto`) and the API
// documents (docs/openapi.json, docs/asyncapi.json, `npm run docs`). Exits 1 with the differing files.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { generate } from "./gen-proto.mjs";
import { generateWebchat, WEBCHAT_OUT } from "./gen-webchat.mjs";

function listFiles(root) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(root, path));
    }
  };
  walk(root);
  return out.sort();
}

/** Differences between freshly generated `files` (in `fresh`) and the checked-in ones (in `dir`). */
function compare(fresh, dir, files, { exhaustive }) {
  const want = files ?? listFiles(fresh);
  const have = exhaustive ? listFiles(dir) : want.filter((file) => existsSync(join(dir, file)));
  const problems = [];
  for (const file of new Set([...want, ...have])) {
    const shown = join(dir, file);
    if (!want.includes(file)) problems.push(`stale file (not generated any more): ${shown}`);
    else if (!have.includes(file)) problems.push(`missing generated file: ${shown}`);
    else if (!readFileSync(join(fresh, file)).equals(readFileSync(shown))) problems.push(`out of date: ${shown}`);
  }
  return problems;
}

const protoTmp = mkdtempSync(join(tmpdir(), "gw-proto-"));
const docsTmp = mkdtempSync(join(tmpdir(), "gw-docs-"));
try {
  generate(protoTmp);
  const problems = compare(protoTmp, "libs/contracts/src/gen", undefined, { exhaustive: true });
  execFileSync(process.execPath, ["--import", "tsx", "scripts/gen-api-docs.ts", docsTmp], { stdio: ["ignore", "ignore", "inherit"] });
  problems.push(...compare(docsTmp, "docs", ["asyncapi.json", "openapi.json"], { exhaustive: false }));
  const webchatTmp = await generateWebchat(join(docsTmp, "webchat-assets.ts"));
  if (!existsSync(WEBCHAT_OUT)) problems.push(`missing generated file: ${WEBCHAT_OUT}`);
  else if (!readFileSync(webchatTmp).equals(readFileSync(WEBCHAT_OUT))) problems.push(`out of date: ${WEBCHAT_OUT}`);
  if (problems.length > 0) {
    console.error(
      `Generated files are not current. Run \`npm run proto\` / \`npm run docs\` and commit:\n  ${problems.join("\n  ")}`,
    );
    process.exit(1);
  }
  console.log("generated code and API documents are current");
} finally {
  rmSync(protoTmp, { recursive: true, force: true });
  rmSync(docsTmp, { recursive: true, force: true });
}
