import { callRpc, connectNats, createSubjects, InProcessBus, NatsBus } from "@gw/bus";
import { defaultConfig } from "@gw/config";
import { type NewSessionEntry, RPC } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { FileSessionRepository, startSessionsService } from "@gw/sessions";
import type { Bus } from "@gw/bus";

/** The shape of the data the sessions benchmark reads. */
export interface Population {
  sessions: number;
  longMessages: number;
  longKey: string;
  shortKey: string;
}

const subjects = createSubjects();
const entry = (body: string): NewSessionEntry => ({
  role: "user",
  sender: "bench",
  body,
  runId: "",
  metaJson: Buffer.alloc(0),
});

async function append(bus: Bus, key: string, body: string): Promise<void> {
  await callRpc(bus, subjects, RPC.sessionsAppend, { key, agentId: "", entries: [entry(body)] }, { timeoutMs: 30_000 });
}

/** Runs `work(i)` for i in [0, count) with `parallel` in flight. */
async function pool(count: number, parallel: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/**
 * `sessions` one-message sessions, one session of `longMessages` messages and one of 40 (the
 * same 20 newest messages to preview, with 125x less history behind them), written through the
 * sessions service's append RPC (one message per append, as a conversation grows).
 */
async function populate(bus: Bus, p: Population, log: (line: string) => void): Promise<void> {
  const started = performance.now();
  await pool(p.sessions, 32, (i) => append(bus, `bench:s${i}`, `hello from session ${i}`));
  log(`  ${p.sessions} sessions written in ${Math.round(performance.now() - started)} ms`);
  const longStarted = performance.now();
  for (let i = 0; i < p.longMessages; i++) await append(bus, p.longKey, `message ${i} of a long conversation`);
  for (let i = 0; i < 40; i++) await append(bus, p.shortKey, `message ${i} of a short conversation`);
  log(`  ${p.longMessages} messages in ${p.longKey} in ${Math.round(performance.now() - longStarted)} ms`);
}

/** Embedded mode: the file store under `dataDir/sessions`, written by the same service code before the gateway starts. */
export async function populateFiles(dataDir: string, p: Population, log: (line: string) => void): Promise<void> {
  const bus = new InProcessBus();
  const repo = await FileSessionRepository.open(`${dataDir}/sessions`);
  const service = startSessionsService({
    config: defaultConfig(),
    bus,
    subjects,
    repo,
    logger: createLogger({ service: "bench", level: "silent" }),
  });
  try {
    await populate(bus, p, log);
  } finally {
    service.stop();
    await bus.close();
    await repo.close();
  }
}

/** Distributed mode: through NATS to the running sessions service. */
export async function populateNats(url: string, p: Population, log: (line: string) => void): Promise<void> {
  const bus = new NatsBus(await connectNats({ url }));
  try {
    await populate(bus, p, log);
  } finally {
    await bus.close();
  }
}
