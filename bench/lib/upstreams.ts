import { type BenchProcess, spawnBench } from "./procs.js";

/** The fake OpenAI upstream and the passthrough floor in front of it, by base URL. */
export interface Upstreams {
  /** bench/servers/fake-openai.ts. */
  upstream: string;
  /** bench/servers/passthrough.mjs, forwarding to `upstream`. */
  floor: string;
  /** The passthrough's process (its memory is a baseline). */
  floorProcess: BenchProcess;
}

/** Starts the fake upstream and the passthrough, runs `body`, and stops both whatever happens. */
export async function withUpstreams<T>(body: (up: Upstreams) => Promise<T>): Promise<T> {
  const fake = spawnBench("servers/fake-openai.ts");
  let passthrough: BenchProcess | undefined;
  try {
    const upstream = `http://127.0.0.1:${(await fake.waitLine(/listening (\d+)/))[1]}`;
    passthrough = spawnBench("servers/passthrough.mjs", [upstream]);
    const floor = `http://127.0.0.1:${(await passthrough.waitLine(/listening (\d+)/))[1]}`;
    return await body({ upstream, floor, floorProcess: passthrough });
  } finally {
    await passthrough?.stop();
    await fake.stop();
  }
}
