// Runs the npm scripts named on the command line at once, and prints each one's output whole
// when it ends (never interleaved), so `npm run check` takes about as long as its slowest step
// instead of the sum of them: lint and typecheck each build their own TypeScript program on one
// core (docs/decisions.md, Runtime). Exits 1 when any of them failed.
import { spawn } from "node:child_process";

/** Resolves true when `npm run <script>` exited 0, after printing what it wrote. */
function run(script) {
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", script], { stdio: ["ignore", "pipe", "pipe"] });
    const output = [];
    child.stdout.on("data", (chunk) => output.push(chunk));
    child.stderr.on("data", (chunk) => output.push(chunk));
    child.on("error", (err) => output.push(Buffer.from(`${err.message}\n`)));
    child.on("close", (code, signal) => {
      const outcome = code === 0 ? "passed" : `failed (${signal ?? `exit ${code}`})`;
      process.stdout.write(Buffer.concat([...output, Buffer.from(`== npm run ${script} ${outcome}\n`)]));
      resolve(code === 0);
    });
  });
}

const results = await Promise.all(process.argv.slice(2).map(run));
process.exit(results.every(Boolean) ? 0 : 1);
