import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient } from "@nats-io/jetstream";
import { headers, type MsgHdrs } from "@nats-io/nats-core";

/**
 * A compare-and-set write to one subject that holds on replicated streams too.
 *
 * nats-server checks Nats-Expected-Last-Subject-Sequence on a replicated stream only before the
 * write goes through consensus (nats-io/nats-server#4320, fixed after 2.9.20; Debian ships
 * 2.9.10): writers racing with the same expectation can all succeed, which forks a session or
 * loses a KV update. The clustered write path does stage message ids before consensus, so a
 * Nats-Msg-Id naming (subject, expected sequence) lets exactly one of them through; the others
 * get a duplicate acknowledgement, reported here as the sequence conflict the check would have
 * raised. An expected sequence names one message for good (stream sequences never repeat), so
 * the id cannot catch an unrelated later write. Expecting 0 ("no message yet") is enforced by
 * the server itself and needs no id.
 */
export async function publishExpecting(
  js: JetStreamClient,
  subject: string,
  data: Uint8Array,
  expected: number,
  hdrs: MsgHdrs = headers(),
): Promise<number> {
  const ack = await js.publish(subject, data, {
    headers: hdrs,
    expect: { lastSubjectSequence: expected },
    ...(expected > 0 ? { msgID: `cas:${subject}:${expected}` } : {}),
  });
  if (ack.duplicate) {
    throw new JetStreamApiError({
      code: 400,
      err_code: JetStreamApiCodes.StreamWrongLastSequence,
      description: `wrong last sequence: another write expecting ${expected} on ${subject} won`,
    });
  }
  return ack.seq;
}

/** A KV key's subject in its bucket's stream. */
export function kvSubject(bucket: string, key: string): string {
  return `$KV.${bucket}.${key}`;
}

/**
 * What `kv.purge` does (a marker that rolls up every earlier value of the key), returning the
 * marker's revision, which orders the removal after every earlier write of the key.
 */
export async function purgeKvKey(js: JetStreamClient, bucket: string, key: string): Promise<number> {
  const hdrs = headers();
  hdrs.set("KV-Operation", "PURGE");
  hdrs.set("Nats-Rollup", "sub");
  return (await js.publish(kvSubject(bucket, key), new Uint8Array(0), { headers: hdrs })).seq;
}
