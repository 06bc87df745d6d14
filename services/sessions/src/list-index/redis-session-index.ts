import { randomUUID } from "node:crypto";
import { GatewayError, readStoredJson } from "@gw/contracts";
import { type RedisClient, runScript } from "@gw/store";
import { type SessionMeta, SessionMetaSchema } from "../model.js";
import type { PageQuery, SessionIndex, SessionPage } from "./session-index.js";

/**
 * Keys under `<redis.keyPrefix>{sessions}:` (one hash tag: on a Redis Cluster every key of the
 * index lives in one slot, so each script below runs on one node and touches only its keys): `meta` (hash: session key -> {v, a, s, m}: version,
 * agent, sort member, metadata JSON; a removal keeps {v} alone), `all` and `agent:<id>` (sorted
 * sets, every score 0, so Redis orders members bytewise: the member is the inverted updatedAt,
 * zero-padded, then "|" and the key, i.e. newest first and the key ascending among equals).
 * Each change is one script, atomic against every other replica's.
 */
const PUT = `
local root = ARGV[1]
local key = ARGV[2]
local version = tonumber(ARGV[3])
local old = redis.call('HGET', root .. 'meta', key)
if old then
  local was = cjson.decode(old)
  if was.v >= version then return 0 end
  if was.s then
    redis.call('ZREM', root .. 'all', was.s)
    redis.call('ZREM', root .. 'agent:' .. was.a, was.s)
  end
end
if ARGV[4] == '' then
  redis.call('HSET', root .. 'meta', key, cjson.encode({v = version}))
  return 1
end
redis.call('ZADD', root .. 'all', 0, ARGV[6])
redis.call('ZADD', root .. 'agent:' .. ARGV[5], 0, ARGV[6])
redis.call('HSET', root .. 'meta', key, cjson.encode({v = version, a = ARGV[5], s = ARGV[6], m = ARGV[4]}))
return 1`;

/** Returns {total, meta JSON...} for one page of `KEYS[1]`; a member's key starts after "<13 digits>|". */
const PAGE = `
local root = ARGV[1]
local total = redis.call('ZCARD', KEYS[1])
local members = redis.call('ZRANGE', KEYS[1], ARGV[2], ARGV[3])
local out = {total}
for _, member in ipairs(members) do
  local raw = redis.call('HGET', root .. 'meta', string.sub(member, 15))
  if raw then out[#out + 1] = cjson.decode(raw).m end
end
return out`;

/** The stored epoch, or ARGV[1] stored as the epoch when there is none. */
const EPOCH = `
local current = redis.call('GET', KEYS[1])
if current then return current end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]`;

const UPDATED_DIGITS = 13;
const LATEST = 10 ** UPDATED_DIGITS - 1;

/** Sorts bytewise as newest first, then by key. */
export function sortMember(meta: SessionMeta): string {
  const inverted = LATEST - Math.min(Math.max(0, Math.floor(meta.updatedAt)), LATEST);
  return `${String(inverted).padStart(UPDATED_DIGITS, "0")}|${meta.key}`;
}

/** The client hears what failed (the catalogue's words); Redis's own text stays in the cause, for logs. */
const unavailable = (err: unknown) => new GatewayError("UNAVAILABLE", "the session index (Redis) is unavailable; try again", { cause: err });

/** The distributed index: Redis sorted sets shared by every sessions replica. */
export class RedisSessionIndex implements SessionIndex {
  private readonly root: string;

  /**
   * `keyPrefix` is `redis.keyPrefix`; the client is this index's own (closed with it).
   * `onCorrupt` hears of a listed metadata value that does not decode: the page leaves it out.
   */
  constructor(
    private readonly client: RedisClient,
    keyPrefix: string,
    private readonly onCorrupt?: (problem: string) => void,
  ) {
    this.root = `${keyPrefix}{sessions}:`;
  }

  async put(meta: SessionMeta, version: number): Promise<void> {
    await this.run(PUT, [this.root, meta.key, version, JSON.stringify(meta), meta.agentId, sortMember(meta)], [`${this.root}meta`]);
  }

  async remove(key: string, version: number): Promise<void> {
    await this.run(PUT, [this.root, key, version, "", "", ""], [`${this.root}meta`]);
  }

  async page(q: PageQuery): Promise<SessionPage> {
    const set = q.agentId === "" ? `${this.root}all` : `${this.root}agent:${q.agentId}`;
    const raw = (await this.run(PAGE, [this.root, q.offset, q.offset + q.limit - 1], [set])) as [
      number,
      ...string[],
    ];
    const [total, ...metas] = raw;
    const sessions: SessionMeta[] = [];
    for (const m of metas) {
      const read = readStoredJson(m, SessionMetaSchema);
      if (read.ok) sessions.push(read.value);
      else this.onCorrupt?.(read.problem);
    }
    return { sessions, total: Number(total) };
  }

  async epoch(): Promise<string> {
    return String(await this.run(EPOCH, [randomUUID()], [`${this.root}epoch`]));
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }

  private async run(script: string, args: (string | number)[], keys: string[] = []): Promise<unknown> {
    try {
      return await runScript(this.client, script, keys, args);
    } catch (err) {
      throw unavailable(err);
    }
  }
}
