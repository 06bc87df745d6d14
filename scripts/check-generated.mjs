// Proves the checked-in ts-proto output is current: regenerate into a temp dir and
// compare byte for byte with libs/contracts/src/gen. Exits 1 with the differing files.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { generate } from "./gen-proto.mjs";

const genDir = "libs/contracts/src/gen";
const tmp = mkdtempSync(join(tmpdir(), "gw-proto-"));

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

try {
  generate(tmp);
  const fresh = tmp;
  const want = listFiles(fresh);
  const have = listFiles(genDir);
  const problems = [];
  for (const file of new Set([...want, ...have])) {
    if (!want.includes(file)) problems.push(`stale file (not generated any more): ${file}`);
    else if (!have.includes(file)) problems.push(`missing generated file: ${file}`);
    else if (!readFileSync(join(fresh, file)).equals(readFileSync(join(genDir, file)))) {
      problems.push(`out of date: ${file}`);
    }
  }
  if (problems.length > 0) {
    console.error(
      `Generated code is not current. Run \`npm run proto\` and commit:\n  ${problems.join("\n  ")}`,
    );
    process.exit(1);
  }
  console.log(`generated code is current (${want.length} files)`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
