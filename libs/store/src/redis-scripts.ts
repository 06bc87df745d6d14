import { createHash } from "node:crypto";
import type { RedisClient } from "./redis-connect.js";

/**
 * Lua keeps each read-modify-write a single Redis step, so processes sharing one Redis never
 * interleave inside an operation.
 */

/**
 * Claims for ARGV[2] (its holder, "" for none): returns "N" when this caller claimed the key,
 * else the stored "P<holder>" (pending) or "D<result>".
 */
export const IDEM_BEGIN = `
if redis.call('SET', KEYS[1], 'P' .. ARGV[2], 'PX', ARGV[1], 'NX') then return 'N' end
return redis.call('GET', KEYS[1])`;

/** Deletes only ARGV[1]'s pending claim: a completed result, or another holder's claim, survives a late abandon(). */
export const IDEM_ABANDON = `
if redis.call('GET', KEYS[1]) == 'P' .. ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** Extends only ARGV[2]'s pending claim; returns 1 when it did. */
export const IDEM_EXTEND = `
if redis.call('GET', KEYS[1]) == 'P' .. ARGV[2] then return redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 0`;

/** Fixed window: the first hit sets the expiry, later hits leave it alone. Returns {count, pttl}. */
export const COUNTER_HIT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

/**
 * Takes ARGV[1] back only when the count holds that much; deletes the key at 0. Returns {count,
 * pttl}. SET (KEEPTTL), not DECRBY: a keyspace watcher then tells give-backs ("set") from hits
 * ("incrby", which DECRBY reports too).
 */
export const COUNTER_GIVE_BACK = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local step = tonumber(ARGV[1])
if count < step then return {count, redis.call('PTTL', KEYS[1])} end
if count == step then
  redis.call('DEL', KEYS[1])
  return {0, 0}
end
redis.call('SET', KEYS[1], string.format('%d', count - step), 'KEEPTTL')
return {count - step, redis.call('PTTL', KEYS[1])}`;

/** Returns {count, pttl}, or {0, 0} when the window is over. */
export const COUNTER_PEEK = `
local count = redis.call('GET', KEYS[1])
if not count then return {0, 0} end
return {tonumber(count), redis.call('PTTL', KEYS[1])}`;

/** Takes a free lease, or renews one the caller already holds; returns 1 when the caller holds it. */
export const LEASE_ACQUIRE = `
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

/** Extends a lease only for its holder; returns 1 when it did. */
export const LEASE_RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

/** Deletes a lease only for its holder: a late release must not free a successor's lease. */
export const LEASE_RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

const shas = new Map<string, string>();

function sha1(script: string): string {
  let sha = shas.get(script);
  if (sha === undefined) {
    sha = createHash("sha1").update(script).digest("hex");
    shas.set(script, sha);
  }
  return sha;
}

/** EVALSHA first; a restarted Redis has an empty script cache, so fall back to EVAL once. */
export async function runScript(
  client: RedisClient,
  script: string,
  keys: string[],
  args: (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(sha1(script), keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
    return client.eval(script, keys.length, ...keys, ...args);
  }
}
