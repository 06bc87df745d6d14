import { createInbox, type Msg, type NatsConnection, type Status, type Subscription } from "@nats-io/nats-core";

export interface LongPullOptions {
  stream: string;
  consumer: string;
  /** How many more messages the caller can take right now (its free capacity). */
  capacity(): number;
  /** Called with each message the consumer hands over (status messages are handled here). */
  onMessage(msg: Msg): void;
  /** The consumer is gone or unreachable: the caller re-creates it, then calls reset(). */
  onLost(reason: string): void;
  /** A pull request lives this long on the server before it is renewed (default 10 s). */
  expiresMs?: number;
  /** The server sends a heartbeat this often while a request waits; two missed ones mean it is lost (default 1 s). */
  heartbeatMs?: number;
}

/**
 * Pull requests one process keeps waiting at once. The consumer accepts 512 waiting requests in
 * all (max_waiting), so a process must not open one per freed slot.
 */
const MAX_WAITING = 2;
/** The largest batch the JetStream API takes in one pull request. */
const MAX_BATCH = 256;

interface Waiting {
  /** Messages of this request not delivered yet. */
  left: number;
  lastHeard: number;
}

/**
 * One durable pull consumer read through one subscription for the process's lifetime. nats.js's
 * `consume()` keeps one inbox too, but refills its buffer as messages arrive, not as the runner
 * frees capacity; `fetch()` opens a new inbox (a SUB and an UNSUB) per call. This asks for
 * exactly as many messages as the caller has capacity for, in at most MAX_WAITING requests,
 * each with its own reply subject under the one subscription, so each status names its request:
 * a request ends when it is served in full, expires (408), or the server ends it (409), or when
 * it falls silent for two heartbeats (a consumer leader that moved on a cluster forgets its
 * waiting requests). A reconnect forgets them all.
 */
export class LongPull {
  private readonly inbox = createInbox();
  private readonly sub: Subscription;
  private readonly expiresMs: number;
  private readonly heartbeatMs: number;
  private readonly watchdog: NodeJS.Timeout;
  private readonly statuses: AsyncIterator<Status>;
  private readonly waiting = new Map<string, Waiting>();
  private next = 0;
  private stopped = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly opts: LongPullOptions,
  ) {
    this.expiresMs = opts.expiresMs ?? 10_000;
    this.heartbeatMs = opts.heartbeatMs ?? 1_000;
    this.sub = nc.subscribe(`${this.inbox}.*`, { callback: (err, msg) => (err ? undefined : this.receive(msg)) });
    this.watchdog = setInterval(() => this.checkHeartbeats(), this.heartbeatMs);
    this.watchdog.unref();
    this.statuses = nc.status()[Symbol.asyncIterator]();
    // followReconnects catches its own iterator's failure; nothing may go unhandled.
    this.followReconnects().catch(() => undefined);
  }

  /** Asks for as many messages as the caller has capacity for beyond those already asked for. */
  refill(): void {
    let more = this.opts.capacity() - this.requested();
    while (!this.stopped && !this.nc.isClosed() && more > 0 && this.waiting.size < MAX_WAITING) {
      const batch = Math.min(more, MAX_BATCH);
      const reply = `${this.inbox}.${++this.next}`;
      this.waiting.set(reply, { left: batch, lastHeard: Date.now() });
        const body = { batch, expires: this.expiresMs * 1_000_000, idle_heartbeat: this.heartbeatMs * 1_000_000 };
      this.nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${this.opts.stream}.${this.opts.consumer}`, JSON.stringify(body), { reply });
      more -= batch;
    }
  }

  /** Forgets requests the server may have dropped and asks again (after a reconnect or re-creation). */
  reset(): void {
    this.waiting.clear();
    this.refill();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.watchdog);
    this.statuses.return?.().catch(() => undefined);
    this.sub.unsubscribe();
  }

  private requested(): number {
    let sum = 0;
    for (const w of this.waiting.values()) sum += w.left;
    return sum;
  }

  private receive(msg: Msg): void {
    const code = msg.headers?.code ?? 0;
    if (code === 0 || code === 200) {
      // A delivery carries the stream's subject, not its request's: the server serves waiting
      // requests in order, so it counts against the oldest. One delivered for a request given
      // up already is the caller's to refuse (it checks its capacity itself).
      const [oldest] = this.waiting;
      if (oldest !== undefined) {
        oldest[1].lastHeard = Date.now();
        if (--oldest[1].left <= 0) this.waiting.delete(oldest[0]);
      }
      this.opts.onMessage(msg);
      return;
    }
    // Status messages come on the request's own reply subject.
    const request = this.waiting.get(msg.subject);
    if (request !== undefined) request.lastHeard = Date.now();
    if (code === 100) return; // idle heartbeat: the request still waits on the server
    // 404/408: the request ended (no messages, expired); 409: the server ended it, and says why.
    this.waiting.delete(msg.subject);
    const description = msg.headers?.description.toLowerCase() ?? "";
    if (code === 503 || description.includes("consumer deleted") || description.includes("consumer not found")) {
      this.waiting.clear();
      this.opts.onLost(`${code} ${description}`);
      return;
    }
    // What the request left undelivered is asked for again; after a 409 (too many waiting
    // requests on the consumer, a request too big) only a heartbeat later, so a limit the
    // server keeps hitting does not turn into a loop of requests.
    if (code === 409) setTimeout(() => this.refill(), this.heartbeatMs).unref();
    else this.refill();
  }

  private checkHeartbeats(): void {
    const silent = Date.now() - 2 * this.heartbeatMs;
    let lost = false;
    for (const [reply, w] of this.waiting) {
      if (w.lastHeard < silent) {
        this.waiting.delete(reply);
        lost = true;
      }
    }
    if (lost) this.refill();
  }

  private async followReconnects(): Promise<void> {
    for (;;) {
      const next = await this.statuses.next().catch(() => ({ done: true as const, value: undefined }));
      if (next.done === true || this.stopped) return;
      if (next.value.type === "reconnect") this.reset();
    }
  }
}
