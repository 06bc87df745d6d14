import type { JetStreamClient } from "@nats-io/jetstream";
import { decodeBatch } from "../batch-codec.js";
import type { StoredEntry } from "../model.js";

/**
 * The whole current branch of one session, oldest first, up to the batch at `lastSeq`: one ordered
 * consumer over the session's subject (rollups already removed everything before the last base),
 * instead of one request per batch.
 */
export async function readBranch(
  js: JetStreamClient,
  stream: string,
  subject: string,
  lastSeq: number,
  gen: string,
): Promise<StoredEntry[]> {
  const consumer = await js.consumers.get(stream, { filter_subjects: subject });
  const messages = await consumer.consume({ max_messages: 512 });
  let entries: StoredEntry[] = [];
  // A concurrent delete may purge the subject under us: never wait for messages that are gone.
  const guard = setTimeout(() => messages.stop(), 10_000);
  try {
    for await (const msg of messages) {
      if (msg.seq > lastSeq) break;
      const batch = decodeBatch(msg.data);
      if (batch && batch.gen === gen) {
        if (batch.base) entries = [];
        entries.push(...batch.entries);
      }
      if (msg.seq === lastSeq || msg.info.pending === 0) break;
    }
  } finally {
    clearTimeout(guard);
    messages.stop();
  }
  return entries;
}
