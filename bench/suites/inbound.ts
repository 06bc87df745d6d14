import { telegramUpdate, telegramWebhookRequest } from "@gw/testing";
import { type GatewayUnderTest, type Mode, routeExists, startBenchGateway } from "../lib/gateway.js";
import { spawnBench } from "../lib/procs.js";
import { Samples } from "../lib/stats.js";
import { atLeast, type BenchContext, type BenchResult, info, notAvailable, type Suite } from "../lib/suite.js";
import { startTelegramRecorder } from "../servers/telegram-recorder.js";

const BOT_TOKEN = "100001:AAbench-inbound-token";
const SECRET = "bench-inbound-webhook-secret";
/** Private chats the messages are spread over (a session's messages are answered one after another). */
const CHATS = 64;
const TARGET_RATE = 50;
const RAMP = [50, 100, 150, 200, 300, 400, 600];
/** A step passes while its webhook-to-answer p99 stays at or under this. */
const P99_LIMIT_MS = 1_000;
/** Messages not answered this long after a step's last post count as lost (the step fails). */
const DRAIN_MS = 15_000;

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Pairs each answer with its message: a chat's answers come in the order its messages went in. */
class Answers {
  private readonly waiting = new Map<string, number[]>();
  latency = new Samples();
  answered = 0;

  expect(chat: string, sentAt: number): void {
    const queue = this.waiting.get(chat) ?? [];
    queue.push(sentAt);
    this.waiting.set(chat, queue);
  }

  /** The post failed: no answer will come for it. */
  forget(chat: string, sentAt: number): void {
    const queue = this.waiting.get(chat) ?? [];
    const index = queue.indexOf(sentAt);
    if (index >= 0) queue.splice(index, 1);
  }

  arrived(chat: string, at: number): void {
    const sentAt = this.waiting.get(chat)?.shift();
    if (sentAt === undefined) return;
    this.latency.add(at - sentAt);
    this.answered++;
  }

  reset(): void {
    this.waiting.clear();
    this.latency = new Samples();
    this.answered = 0;
  }
}

interface Offered {
  rate: number;
  sent: number;
  failed: number;
  answered: number;
  latency: { p50: number; p99: number };
  ack: { p50: number; p99: number };
}

let sequence = 0;

/**
 * Open loop: `rate` webhook posts a second for `seconds`, each at its scheduled time whether or
 * not earlier ones were answered (a platform does not wait), then waits for the answers.
 */
async function offer(url: string, rate: number, seconds: number, answers: Answers, expectAnswers: boolean): Promise<Offered> {
  answers.reset();
  const acks = new Samples();
  const total = Math.round(rate * seconds);
  let failed = 0;
  const posts: Array<Promise<void>> = [];
  const start = now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - now();
    if (wait > 1) await sleep(wait);
    const chat = 5001 + (sequence++ % CHATS);
    const body = JSON.stringify(telegramUpdate({ chatId: chat, from: { id: chat }, text: `bench message ${sequence}` }));
    const sentAt = now();
    if (expectAnswers) answers.expect(String(chat), sentAt);
    posts.push(
      fetch(url, { method: "POST", headers: telegramWebhookRequest({}, SECRET).headers, body })
        .then(async (res) => {
          await res.arrayBuffer();
          acks.add(now() - sentAt);
          if (res.status !== 200) throw new Error(`status ${res.status}`);
        })
        .catch(() => {
          failed++;
          answers.forget(String(chat), sentAt);
        }),
    );
  }
  await Promise.all(posts);
  const deadline = now() + DRAIN_MS;
  while (expectAnswers && answers.answered < total - failed && now() < deadline) await sleep(20);
  return { rate, sent: total, failed, answered: answers.answered, latency: answers.latency.summary(), ack: acks.summary() };
}

/** The same client calling the platform's sendMessage itself at the same rate: the floor. */
async function direct(platform: string, rate: number, seconds: number): Promise<{ p50: number; p99: number }> {
  const samples = new Samples();
  const total = Math.round(rate * seconds);
  const start = now();
  const calls: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - now();
    if (wait > 1) await sleep(wait);
    const sentAt = now();
    calls.push(
      fetch(`${platform}/bot${BOT_TOKEN}/sendMessage`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ chat_id: 9999, text: "direct" }),
      }).then(async (res) => {
        await res.arrayBuffer();
        samples.add(now() - sentAt);
      }),
    );
  }
  await Promise.all(calls);
  return samples.summary();
}

async function measure(ctx: BenchContext, gw: GatewayUnderTest, platform: string, answers: Answers, mode: Mode): Promise<BenchResult> {
  const seconds = Math.max(ctx.args.quick ? 2 : 10, ctx.args.seconds);
  const url = `${gw.httpUrl()}/api/channels/tg/webhook`;
  // Warm up: sessions exist, connections are open, the JIT has seen the path.
  await offer(url, 20, 1, answers, true);
  const baseline = await direct(platform, TARGET_RATE, seconds);
  const steady = await offer(url, TARGET_RATE, seconds, answers, true);
  ctx.log(`  ${mode}: ${TARGET_RATE} msg/s: p50 ${steady.latency.p50} ms, p99 ${steady.latency.p99} ms (answered ${steady.answered}/${steady.sent}, failed ${steady.failed}); direct p50 ${baseline.p50} ms`);
  const ramp: Offered[] = [];
  let sustained = 0;
  for (const rate of RAMP) {
    const step = await offer(url, rate, Math.max(3, Math.min(seconds, 5)), answers, true);
    ramp.push(step);
    const passed = step.failed === 0 && step.answered === step.sent && step.latency.p99 <= P99_LIMIT_MS;
    ctx.log(`  ${mode}: ${rate} msg/s: p99 ${step.latency.p99} ms, answered ${step.answered}/${step.sent}, failed ${step.failed}${passed ? "" : " (over)"}`);
    if (!passed) break;
    sustained = rate;
    // Let the queues empty before the next step.
    await sleep(1_000);
  }
  if (steady.answered === 0) throw new Error(`no webhook was answered (failed ${steady.failed})`);
  return {
    bench: `inbound webhook to answer (${mode})`,
    status: "ok",
    figures: [
      info(`webhook-to-answer p50 at ${TARGET_RATE} msg/s vs calling the platform directly`, "ms", steady.latency.p50, baseline.p50),
      info(`webhook-to-answer p99 at ${TARGET_RATE} msg/s vs calling the platform directly`, "ms", steady.latency.p99, baseline.p99),
      info(`webhook acknowledged (stored) p50 at ${TARGET_RATE} msg/s`, "ms", steady.ack.p50, baseline.p50),
      atLeast(`msgs/s with webhook-to-answer p99 <= 1 s vs ${TARGET_RATE}`, "msg/s", sustained, TARGET_RATE, 1),
    ],
    details: { steady, baseline, ramp, chats: CHATS, seconds },
  };
}

/**
 * Inbound messages end to end: Telegram webhook updates posted to the gateway (edge, bus,
 * delivery: verify, store durably, queue per session, run the agent `fast` on a zero-delay fake
 * upstream, send the answer) until the answer's sendMessage reaches the platform stand-in. At
 * 50 messages/s over 64 chats, then stepped up until p99 passes 1 s. Pacing is off: Telegram's
 * per-chat limit would measure the platform's rule, not the gateway.
 */
async function run(ctx: BenchContext): Promise<BenchResult[]> {
  const upstream = spawnBench("servers/fake-openai.ts");
  const answers = new Answers();
  const recorder = await startTelegramRecorder((chat, at) => answers.arrived(chat, at));
  const results: BenchResult[] = [];
  try {
    const upstreamUrl = `http://127.0.0.1:${(await upstream.waitLine(/listening (\d+)/))[1]}`;
    const channels = {
      default: "tg",
      tg: { kind: "telegram", botToken: BOT_TOKEN, apiBaseUrl: recorder.baseUrl, webhookSecret: SECRET, dmPolicy: "open", agent: "fast" },
    };
    for (const mode of ["embedded", "distributed"] as const) {
      const gw = await startBenchGateway(mode, { upstreamUrl, extraConfig: { channels, delivery: { pacing: "off" } } });
      try {
        if (!(await routeExists(gw, "POST", "/api/channels/tg/webhook"))) {
          results.push(notAvailable(`inbound webhook to answer (${mode})`, "no /api/channels/:channelId/* route yet"));
          continue;
        }
        results.push(await measure(ctx, gw, recorder.baseUrl, answers, mode));
      } catch (err) {
        results.push({ bench: `inbound webhook to answer (${mode})`, status: "failed", reason: (err as Error).message });
      } finally {
        await gw.stop();
      }
    }
  } finally {
    await recorder.close();
    await upstream.stop();
  }
  return results;
}

export const inboundSuite: Suite = { name: "inbound", run };
