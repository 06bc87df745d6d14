import { startBenchGateway, TOKEN } from "../lib/gateway.js";
import { type BenchProcess, sleep, spawnBench } from "../lib/procs.js";
import { atLeast, atMost, type BenchContext, type BenchResult, type Suite } from "../lib/suite.js";
import { openFileLimit, treeRssBytes } from "../lib/system.js";

const TARGET_CONNECTIONS = 20_000;
// The server process needs a few descriptors of its own (listener, stdio, epoll, NATS, logs).
const FD_HEADROOM = 300;
const PER_HOLDER = 8_000;
const PER_ADDRESS = 5_000;

interface Held {
  held: number;
  failed: number;
  rssBefore: number;
  rssAfter: number;
  openSeconds: number;
}

/** Opens `count` idle sockets to `url` from holder processes and measures `pid`'s RSS growth. */
async function holdAndMeasure(
  ctx: BenchContext,
  pid: number,
  url: string,
  count: number,
  mode: "gateway" | "echo",
): Promise<Held> {
  await sleep(1_000);
  const rssBefore = treeRssBytes(pid);
  const holders: BenchProcess[] = [];
  const started = performance.now();
  try {
    for (let h = 0, left = count; left > 0; h++, left -= PER_HOLDER) {
      const n = Math.min(PER_HOLDER, left);
      const addresses = Array.from({ length: Math.ceil(n / PER_ADDRESS) }, (_, i) => `127.0.${10 + h}.${1 + i}`);
      const config = { url, count: n, addresses, perAddress: PER_ADDRESS, mode, token: TOKEN, concurrency: 64 };
      holders.push(spawnBench("clients/idle-holder.ts", [], { HOLDER_CONFIG: JSON.stringify(config) }));
    }
    let held = 0;
    let failed = 0;
    for (const holder of holders) {
      const match = await holder.waitLine(/held (\d+) failed (\d+)(.*)/, 300_000);
      held += Number(match[1]);
      failed += Number(match[2]);
      if (match[3]) ctx.log(`  holder:${match[3]}`);
    }
    const openSeconds = (performance.now() - started) / 1000;
    await sleep(3_000);
    return { held, failed, rssBefore, rssAfter: treeRssBytes(pid), openSeconds };
  } finally {
    await Promise.all(holders.map((h) => h.stop()));
  }
}

const perConnKiB = (h: Held) => (h.held > 0 ? Math.round((h.rssAfter - h.rssBefore) / h.held / 102.4) / 10 : 0);

async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const bench = "idle connections (one edge, embedded)";
  const limit = openFileLimit();
  const count = Math.min(ctx.args.connections, limit - FD_HEADROOM);
  const capped = count < ctx.args.connections;
  if (capped) ctx.log(`  open-file limit ${limit}: holding ${count} instead of ${ctx.args.connections}`);

  const echo = spawnBench("servers/raw-ws-echo.ts");
  let raw: Held;
  try {
    const port = (await echo.waitLine(/listening (\d+)/))[1];
    raw = await holdAndMeasure(ctx, echo.child.pid!, `ws://127.0.0.1:${port}/`, count, "echo");
  } finally {
    await echo.stop();
  }
  ctx.log(`  raw ws: ${raw.held} held, ${perConnKiB(raw)} KiB RSS each`);

  const gw = await startBenchGateway("embedded");
  let gateway: Held;
  try {
    gateway = await holdAndMeasure(ctx, gw.edges[0]!.proc.child.pid!, gw.wsUrl(), count, "gateway");
  } finally {
    await gw.stop();
  }
  ctx.log(`  gateway: ${gateway.held} held, ${perConnKiB(gateway)} KiB RSS each`);

  const target = ctx.args.quick ? count : TARGET_CONNECTIONS;
  return [
    {
      bench,
      status: "ok",
      figures: [
        atMost("RSS per idle connection vs raw ws", "KiB", perConnKiB(gateway), perConnKiB(raw), 1.5),
        atLeast(`authenticated connections held vs ${target}`, "conns", gateway.held, target, 1),
      ],
      details: {
        requested: ctx.args.connections,
        attempted: count,
        openFileLimit: limit,
        cappedByOpenFileLimit: capped,
        gateway,
        raw,
      },
    },
  ];
}

export const idleConnectionsSuite: Suite = { name: "idle-connections", run };
