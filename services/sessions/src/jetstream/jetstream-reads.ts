import { GatewayError } from "@gw/contracts";
import { AckPolicy, type ConsumerInfo, DeliverPolicy, type JetStreamClient, type JetStreamManager, type StoredMsg } from "@nats-io/jetstream";
import { decodeBatch } from "../storage/batch-codec.js";
import type { Batch, StoredEntry } from "../model.js";

/**
 * Each batch names a few earlier batches of its branch ("marks": stream sequence and how many
 * entries of the branch come before that batch), so the newest `limit` entries are one ordered
 * consumer from the right mark to the newest batch: a constant number of JetStream requests
 * whatever the history's length, instead of one request per batch.
 */
export const MARKS_HEADER = "Gw-Marks";
/** Any tail of up to this many entries starts at a mark (the runner's default history limit). */
export const TAIL_WINDOW = 400;
/** A new mark once the branch grew this many entries past the newest one: ~10 marks a batch. */
const MARK_STEP = 50;

export interface Mark {
  seq: number;
  /** Entries of the branch before this batch. */
  before: number;
}

export function readMarks(msg: StoredMsg): Mark[] {
  const raw = msg.header?.get(MARKS_HEADER) ?? "";
  if (raw === "") return [];
  return raw.split(",").map((pair) => {
    const [seq, before] = pair.split(":");
    return { seq: Number(seq), before: Number(before) };
  });
}

export const encodeMarks = (marks: Mark[]) => marks.map((m) => `${m.seq}:${m.before}`).join(",");

/** The marks of a batch that brings the branch to `count` entries, written right after `last`. */
export function nextMarks(last: StoredMsg, lastBatch: Batch, count: number): Mark[] {
  const marks = readMarks(last);
  const before = lastBatch.count - lastBatch.entries.length;
  if (marks.length === 0 || before - marks.at(-1)!.before >= MARK_STEP) marks.push({ seq: last.seq, before });
  // The second mark alone covers the window: the first is no longer needed.
  while (marks.length > 1 && marks[1]!.before <= count - TAIL_WINDOW) marks.shift();
  return marks;
}

/**
 * Where a read of the newest `limit` entries of the branch ending at `newest` starts: the
 * newest batch alone, a mark's sequence, or undefined for the subject's beginning (a tail longer
 * than the window).
 */
export function tailStart(newest: StoredMsg, batch: Batch, limit: number): number | "newest" | undefined {
  if (batch.base || batch.entries.length >= limit) return "newest";
  const marks = readMarks(newest);
  if (marks.length === 0) return "newest";
  const want = Math.max(0, batch.count - limit);
  for (let i = marks.length - 1; i >= 0; i--) if (marks[i]!.before <= want) return marks[i]!.seq;
  return undefined;
}

/** A reading consumer the server drops by itself if its delete never arrives (its reader died). */
const FORGOTTEN_READER_NS = 10 * 1_000_000_000;

/**
 * The branch of `gen` up to the batch at `lastSeq`, oldest first, from the subject's messages
 * from `startSeq` on (its beginning when undefined). Three requests whatever the length: create
 * an ephemeral consumer (its reply says how many messages match), one pull for all of them, and
 * a delete nobody waits for. Undefined when the batch at `lastSeq` is gone (a concurrent reset,
 * compaction or delete rolled it away).
 */
export async function readRange(jsm: JetStreamManager, js: JetStreamClient, range: EntryRange): Promise<StoredEntry[] | undefined> {
  let info: ConsumerInfo;
  try {
    info = await addReader(jsm, range);
  } catch (err) {
    // No reader could be placed (on a replicated stream whose node just died, 2.9 may place the
    // ephemeral consumer on the dead peer and the create times out): walk the subject instead.
    return walkRange(jsm, range, err);
  }
  return readWith(jsm, js, range, info);
}

export interface EntryRange {
  stream: string;
  subject: string;
  startSeq?: number;
  lastSeq: number;
  gen: string;
}

function addReader(jsm: JetStreamManager, range: EntryRange): Promise<ConsumerInfo> {
  const { startSeq } = range;
  return jsm.consumers.add(range.stream, {
    filter_subject: range.subject,
    ...(startSeq === undefined
      ? { deliver_policy: DeliverPolicy.All }
      : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSeq }),
    ack_policy: AckPolicy.None,
    mem_storage: true,
    num_replicas: 1,
    inactive_threshold: FORGOTTEN_READER_NS,
  });
}

async function readWith(jsm: JetStreamManager, js: JetStreamClient, range: EntryRange, info: ConsumerInfo): Promise<StoredEntry[] | undefined> {
  const { lastSeq, gen } = range;
  let entries: StoredEntry[] = [];
  let reached = false;
  try {
    if (info.num_pending === 0) return undefined;
    const messages = await js.consumers
      .getConsumerFromInfo(info)
      .fetch({ max_messages: info.num_pending, expires: 10_000 });
    for await (const msg of messages) {
      if (msg.seq > lastSeq) break;
      entries = withBatch(entries, msg.data, gen);
      if (msg.seq === lastSeq) {
        reached = true;
        break;
      }
    }
  } finally {
    jsm.consumers.delete(range.stream, info.name).catch(() => {});
  }
  return reached ? entries : undefined;
}

/**
 * The fallback read: the subject's messages one direct get at a time (`next_by_subj`), any live
 * replica answering. A lagging replica may not have the newest yet, so the walk counts only when
 * it reaches `lastSeq` itself; otherwise the read fails as retryable, never as "gone" (which would
 * make the caller believe in a concurrent reset). Costs a request per batch in the range.
 */
async function walkRange(jsm: JetStreamManager, range: EntryRange, cause: unknown): Promise<StoredEntry[]> {
  let entries: StoredEntry[] = [];
  for (let seq = range.startSeq ?? 1; ; ) {
    const msg = await jsm.direct.getMessage(range.stream, { seq, next_by_subj: range.subject }).catch(() => null);
    if (msg === null || msg.seq > range.lastSeq) {
      throw new GatewayError("UNAVAILABLE", "the session store is unavailable (a node is recovering); try again", { cause });
    }
    entries = withBatch(entries, msg.data, range.gen);
    if (msg.seq === range.lastSeq) return entries;
    seq = msg.seq + 1;
  }
}

/** The branch so far with one stored batch applied (in place): a base batch of `gen` starts it anew, others of `gen` extend it. */
function withBatch(entries: StoredEntry[], data: Uint8Array, gen: string): StoredEntry[] {
  const batch = decodeBatch(data);
  if (!batch || batch.gen !== gen) return entries;
  const branch = batch.base ? [] : entries;
  branch.push(...batch.entries);
  return branch;
}
