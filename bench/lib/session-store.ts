import { randomUUID } from "node:crypto";
import { connectNats } from "@gw/bus";
import { defaultConfig } from "@gw/config";
import { FileSessionRepository, JetStreamSessionRepository, RedisSessionIndex, type NewSession, type SessionRepository } from "@gw/sessions";
import { connectRedis } from "@gw/store";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";

/** Sessions written straight through the repository, the way the sessions service stores them. */

const entry = (body: string, parentId: string, at: number) => ({
  id: randomUUID(),
  parentId,
  role: "user",
  sender: "bench",
  body,
  timestamp: at,
  runId: "",
  kind: "message",
  meta: "",
});

/** A session of `messages` entries (one batch), updated at `at`, of `agentId`. */
export function benchSession(key: string, agentId: string, messages: number, at: number): NewSession {
  const entries: NewSession["entries"] = [];
  for (let i = 0; i < messages; i++) entries.push(entry(`message ${i} of ${key}`, entries.at(-1)?.id ?? "", at));
  return {
    meta: {
      key,
      agentId,
      model: "builtin/echo",
      thinking: "",
      createdAt: at,
      updatedAt: at,
      messageCount: 0,
      leafId: "",
      gen: randomUUID(),
      historySeq: 0,
    },
    entries,
  };
}

/** `count` sessions of `messages` messages each; every tenth belongs to "ops", the rest to "main". */
export function manySessions(count: number, prefix: string, messages: number): NewSession[] {
  const start = Date.now() - count;
  return Array.from({ length: count }, (_, i) => benchSession(`${prefix}${i}`, i % 10 === 0 ? "ops" : "main", messages, start + i));
}

/** Appends `messages` one-entry batches to a new session, as `messages` agent turns would. */
export async function growSession(repo: SessionRepository, key: string, messages: number): Promise<void> {
  const { meta } = await repo.createMeta(benchSession(key, "main", 0, Date.now()).meta);
  for (let i = 0; i < messages; i++) {
    await repo.append(meta, (tip) => {
      const e = entry(`turn ${i}`, tip.leafId, Date.now());
      return { gen: meta.gen, base: false, count: tip.count + 1, at: e.timestamp, entries: [e] };
    });
  }
}

export function openFileStore(dataDir: string): Promise<FileSessionRepository> {
  return FileSessionRepository.open(`${dataDir}/sessions`);
}

/** The JetStream store a distributed gateway with the default config uses. */
export async function openNatsStore(natsUrl: string, redisUrl: string): Promise<{ repo: JetStreamSessionRepository; close(): Promise<void> }> {
  const config = defaultConfig();
  const nc = await connectNats({ url: natsUrl });
  const index = new RedisSessionIndex(await connectRedis({ url: redisUrl }), config.redis.keyPrefix);
  const repo = await JetStreamSessionRepository.open(nc, {
    subjectPrefix: config.nats.subjectPrefix,
    partitions: config.sessions.partitions,
    index,
  });
  return {
    repo,
    async close() {
      await repo.close();
      await index.close();
      await nc.close();
    },
  };
}

/** Waits until the sessions service's index feeds have applied every metadata change. */
export async function indexFeedsDrained(nc: NatsConnection, timeoutMs = 120_000): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const deadline = Date.now() + timeoutMs;
  const prefix = `KV_${defaultConfig().nats.subjectPrefix}_sessions_p`;
  for (;;) {
    let behind = 0;
    for await (const stream of jsm.streams.list()) {
      if (!stream.config.name.startsWith(prefix)) continue;
      for await (const consumer of jsm.consumers.list(stream.config.name)) behind += consumer.num_pending + consumer.num_ack_pending;
    }
    if (behind === 0) return;
    if (Date.now() > deadline) throw new Error(`the session index feed is still ${behind} changes behind`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
