// The fuzz's state-changing lane: valid, schema-shaped requests that start, abort, wait on, reset,
// delete, patch and compact on a handful of session keys at once, from several control sockets, so
// they race each other inside the gateway. Each request must be answered exactly once, never with
// INTERNAL, however the race goes; refusals a race makes (NOT_FOUND, a run already gone) are fine.
import WebSocket from "ws";

export interface StateLaneOptions {
  url: string;
  token: string;
  sockets: number;
  /** Requests each socket keeps in flight. */
  window: number;
  keys: number;
  seed: number;
  /** How long an answer may take before it counts as missing (a run answers when it ends). */
  answerTimeoutMs: number;
}

export interface StateLaneReport {
  sent: number;
  answered: number;
  /** Answers by method and outcome ("ok" or the error code). */
  outcomes: Map<string, number>;
  problems: string[];
}

/** A small seeded generator (mulberry32): the same seed makes the same requests. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

type Pick = <T>(items: readonly T[]) => T;

/** One request: method and params, over the lane's few keys and the run ids it made. */
function nextRequest(pick: Pick, keys: string[], runIds: string[], lane: number, n: number): { method: string; params: object } {
  const key = pick(keys);
  const recentRun = () => (runIds.length > 0 ? pick(runIds.slice(-20)) : `fz-none-${n}`);
  const choices: Array<[number, () => { method: string; params: object }]> = [
    [5, () => {
      const runId = `fz-${lane}-${n}`;
      runIds.push(runId);
      if (runIds.length > 200) runIds.splice(0, 100);
      const message = pick(["hello", "a longer message for the echo model to stream back in parts", "x".repeat(2_000)]);
      return { method: "agent", params: { sessionKey: key, runId, message, ...(n % 7 === 0 ? { agentId: "ops" } : {}) } };
    }],
    [4, () => ({ method: "chat.abort", params: { runId: recentRun() } })],
    [1, () => ({ method: "agent.wait", params: { runId: recentRun(), timeoutSeconds: 1 } })],
    [2, () => ({ method: "sessions.delete", params: { key } })],
    [2, () => ({ method: "sessions.reset", params: { key } })],
    [1, () => ({ method: "sessions.compact", params: { key } })],
    [1, () => ({ method: "sessions.patch", params: { key, ...pick([{ agentId: "ops" }, { agentId: "main" }, { thinking: "low" }, { model: "builtin/echo" }]) } })],
    [1, () => ({ method: "sessions.preview", params: { key, limit: 5 } })],
    [1, () => ({ method: "sessions.list", params: { limit: 10 } })],
  ];
  const total = choices.reduce((sum, [weight]) => sum + weight, 0);
  let roll = pick(Array.from({ length: total }, (_, i) => i));
  for (const [weight, make] of choices) {
    if (roll < weight) return make();
    roll -= weight;
  }
  return choices[0]![1]();
}

interface Outstanding {
  method: string;
  sentAt: number;
}

/** One control socket sending until `until`, then waiting for its last answers. */
async function runSocket(opts: StateLaneOptions, lane: number, until: number, report: StateLaneReport): Promise<void> {
  const socket = new WebSocket(opts.url);
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  const rand = random(opts.seed + lane);
  const pick: Pick = (items) => items[Math.floor(rand() * items.length)]!;
  const keys = Array.from({ length: opts.keys }, (_, i) => `fz:${i}`);
  const runIds: string[] = [];
  const outstanding = new Map<number, Outstanding>();
  const answeredIds = new Set<number>();
  let nextId = 1;
  let closed = false;
  let wake: (() => void) | undefined;
  socket.on("close", () => {
    closed = true;
    wake?.();
  });
  socket.on("message", (data) => {
    const frame = JSON.parse(String(data)) as { id?: unknown; ok?: boolean; event?: string; error?: { code?: string } };
    if (frame.event !== undefined || typeof frame.id !== "number") return;
    const pending = outstanding.get(frame.id);
    if (pending === undefined) {
      report.problems.push(`lane ${lane}: ${answeredIds.has(frame.id) ? "a second answer" : "an answer nobody asked for"} to id ${frame.id}`);
      return;
    }
    outstanding.delete(frame.id);
    answeredIds.add(frame.id);
    report.answered++;
    const outcome = frame.ok === true ? "ok" : (frame.error?.code ?? "malformed error");
    const label = `${pending.method} ${outcome}`;
    report.outcomes.set(label, (report.outcomes.get(label) ?? 0) + 1);
    if (frame.id === 0 && frame.ok !== true) report.problems.push(`lane ${lane}: connect refused (${outcome})`);
    if (outcome === "INTERNAL") report.problems.push(`lane ${lane}: ${pending.method} answered INTERNAL`);
    wake?.();
  });
  const send = (id: number, method: string, params: object) => {
    outstanding.set(id, { method, sentAt: Date.now() });
    socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    report.sent++;
  };
  send(0, "connect", { role: "control", auth: { token: opts.token }, client: { name: "fuzz-state", version: "1" } });
  const settle = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  while (outstanding.has(0) && !closed) await settle(100);
  while (Date.now() < until && !closed) {
    while (outstanding.size < opts.window) {
      const id = nextId++;
      const { method, params } = nextRequest(pick, keys, runIds, lane, id);
      send(id, method, params);
    }
    await settle(50);
  }
  const deadline = Date.now() + opts.answerTimeoutMs;
  while (outstanding.size > 0 && !closed && Date.now() < deadline) await settle(100);
  if (closed) report.problems.push(`lane ${lane}: the gateway closed the socket`);
  for (const [id, { method, sentAt }] of outstanding) {
    report.problems.push(`lane ${lane}: ${method} (id ${id}) unanswered after ${Math.round((Date.now() - sentAt) / 1000)} s`);
  }
  socket.close();
}

/** Runs the lane for `seconds`; every socket stops sending then, and waits for its answers. */
export async function runStateLane(opts: StateLaneOptions, seconds: number): Promise<StateLaneReport> {
  const report: StateLaneReport = { sent: 0, answered: 0, outcomes: new Map(), problems: [] };
  const until = Date.now() + seconds * 1000;
  const lanes = Array.from({ length: opts.sockets }, (_, lane) =>
    runSocket(opts, lane, until, report).catch((err: unknown) => {
      report.problems.push(`lane ${lane}: ${(err as Error).message}`);
    }),
  );
  await Promise.all(lanes);
  return report;
}

/** "method outcome: count" lines, most frequent first. */
export function formatOutcomes(outcomes: Map<string, number>): string {
  return [...outcomes]
    .sort((a, b) => b[1] - a[1])
    .map(([label, count]) => `    ${label}: ${count}`)
    .join("\n");
}
