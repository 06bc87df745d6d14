import { retryDelay, sleep } from "@gw/runtime";
import { JetStreamApiError } from "@nats-io/jetstream";

const CREATE_ATTEMPTS = 5;

/** A JetStream API call nobody answered in time: a busy or electing server, worth another try. */
const UNANSWERED = new Set(["TimeoutError", "NoRespondersError"]);

/**
 * Creates (or opens) a stream or KV bucket that another replica starting at the same moment may
 * be creating too, and that a busy cluster may be slow to make. The server can refuse the second
 * create of one stream or bucket ("subjects overlap with an existing stream") while the first is
 * still being made; a moment later the same call finds it made and opens it. A call that timed
 * out is tried again the same way (a create is idempotent, and may have landed): a 3-node cluster
 * under load let one of 32 replicated stream creates time out and the sessions service failed to
 * start, and later an edge's KV bucket open did the same. Five tries, 0.1-1 s apart (jittered).
 */
export async function createRacing<T>(create: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await create();
    } catch (err) {
      const unanswered = err instanceof Error && UNANSWERED.has(err.name);
      const racing = unanswered || err instanceof JetStreamApiError || /overlap|already in use/i.test(String(err));
      if (!racing || attempt >= CREATE_ATTEMPTS - 1) throw err;
      await sleep(retryDelay(attempt, { baseMs: 100, capMs: 1_000, jitter: "full" }));
    }
  }
}
