import { randomUUID } from "node:crypto";
import { connectNats, encodeSubjectToken } from "@gw/bus";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { MemorySessionIndex } from "../list-index/memory-session-index.js";
import type { SessionIndex } from "../list-index/session-index.js";
import { JetStreamSessionRepository } from "./jetstream-repository.js";
import { partitionOf } from "./session-streams.js";
import { expect } from "vitest";
import type { RepositorySubject } from "../repository.contract.js";

/** The subjects of every JetStream API request (direct gets included) sent while `work` runs. */
export async function countJetStreamRequests(monitor: NatsConnection, work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const sub = monitor.subscribe("$JS.API.>", {
    callback: (_err, msg) => {
      seen.push(msg.subject);
    },
  });
  await monitor.flush();
  await work();
  // A reading consumer's delete leaves after the read returns, unawaited: let it arrive.
  if (seen.some((subject) => subject.includes(".CONSUMER.CREATE."))) {
    await expect.poll(() => seen.some((subject) => subject.includes(".CONSUMER.DELETE.")), { timeout: 5_000 }).toBe(true);
  }
  await monitor.flush();
  sub.unsubscribe();
  return seen;
}

export interface JetStreamReposOptions {
  replicas: number;
  partitions: number;
  /** The list index of a prefix's repositories (default: one shared in-memory index per prefix). */
  index?: (subjectPrefix: string) => Promise<SessionIndex>;
}

/**
 * Opens repositories on one NATS (a server or a cluster's URL list), tracking their connections.
 * Repositories of one prefix share one in-memory list index unless `index` makes another (Redis).
 */
export class JetStreamRepos {
  readonly connections: NatsConnection[] = [];
  private readonly indexes = new Map<string, MemorySessionIndex>();

  constructor(
    private readonly url: () => string,
    private readonly opts: JetStreamReposOptions,
  ) {}

  async open(subjectPrefix: string, partitions = this.opts.partitions): Promise<JetStreamSessionRepository> {
    const nc = await connectNats({ url: this.url() });
    this.connections.push(nc);
    const index = this.opts.index ? await this.opts.index(subjectPrefix) : this.memoryIndex(subjectPrefix);
    return JetStreamSessionRepository.open(nc, { subjectPrefix, replicas: this.opts.replicas, partitions, index });
  }

  private memoryIndex(subjectPrefix: string): MemorySessionIndex {
    let index = this.indexes.get(subjectPrefix);
    if (index === undefined) {
      index = new MemorySessionIndex();
      this.indexes.set(subjectPrefix, index);
    }
    return index;
  }

  /** The history stream of `key`'s partition. */
  entriesStream(prefix: string, key: string): string {
    return `${prefix}_session_entries_p${partitionOf(key, this.opts.partitions)}`;
  }

  /** The messages on `key`'s entries subject and its metadata value, read with the stream API. */
  async leftovers(prefix: string, key: string): Promise<string[]> {
    const jsm = await jetstreamManager(this.connections[0]!);
    const token = encodeSubjectToken(key);
    const p = partitionOf(key, this.opts.partitions);
    const found: string[] = [];
    const entries = `${prefix}.sessions.p${p}.entries.${token}`;
    const info = await jsm.streams.info(this.entriesStream(prefix, key), { subjects_filter: entries });
    const count = info.state.subjects?.[entries] ?? 0;
    if (count > 0) found.push(`${count} message(s) on ${entries}`);
    // A purge leaves an empty marker on the key's subject (history 1): no value, no key.
    const bucket = `${prefix}_sessions_p${p}`;
    const meta = await jsm.streams.getMessage(`KV_${bucket}`, { last_by_subj: `$KV.${bucket}.${token}` });
    const operation = meta?.header?.get("KV-Operation") || "PUT";
    if (meta && (operation === "PUT" || meta.data.length > 0)) found.push(`KV key ${token} (${operation})`);
    return found;
  }

  /**
   * A contract subject: a fresh prefix per test, so its own streams and buckets. With `owner`, its
   * repository owns every partition (answers from memory, as a sole sessions replica does) and
   * its replicas none.
   */
  async subject(opts: { owner?: boolean } = {}): Promise<RepositorySubject> {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const everyPartition = new Set(Array.from({ length: this.opts.partitions }, (_, p) => p));
    const open = async () => {
      const opened = await this.open(prefix);
      if (opts.owner) opened.own(everyPartition);
      return opened;
    };
    let repo = await open();
    const replicas: JetStreamSessionRepository[] = [];
    return {
      get repo() {
        return repo;
      },
      replica: async () => {
        const other = await this.open(prefix);
        replicas.push(other);
        return other;
      },
      reopen: async () => {
        await repo.close();
        repo = await open();
        return repo;
      },
      leftovers: (key) => this.leftovers(prefix, key),
      ...(opts.owner ? { settle: () => repo.caughtUp() } : {}),
      async dispose() {
        await Promise.all([repo, ...replicas].map((r) => r.close()));
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.connections.splice(0).map((nc) => nc.close()));
  }
}
