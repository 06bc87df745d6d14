import { GatewayError } from "@gw/contracts";
import { NoServiceAnswers } from "./bus.js";
import { type Deadline, Deadlines } from "./deadlines.js";
import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/nats-core";

interface Pending {
  subject: string;
  resolve(reply: Msg): void;
  reject(err: GatewayError): void;
  timeout: Deadline;
}

/**
 * Request/reply over one inbox subscription per connection. nats.js's request() does the same
 * but builds an Error (with its stack trace) for every request it completes, which in a profile
 * of the edge under `sessions.preview` load cost more than a tenth of the process's CPU; here a
 * request costs its map entry and a deadline (one timer per timeout length, deadlines.ts), and
 * errors are built only for failures.
 */
export class RequestMux {
  private sub: Subscription | undefined;
  private prefix = "";
  private next = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly deadlines = new Deadlines();

  constructor(private readonly nc: NatsConnection) {}

  /** Resolves with the reply; UNAVAILABLE when nobody listens on `subject`, TIMEOUT after `timeoutMs`. */
  request(subject: string, data: Uint8Array, headers: MsgHdrs, timeoutMs: number): Promise<Msg> {
    const inbox = this.inbox();
    const token = (this.next++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timeout = this.deadlines.start(timeoutMs, () => {
        this.pending.delete(token);
        reject(new GatewayError("TIMEOUT", `no reply on ${subject} within ${timeoutMs} ms`));
      });
      this.pending.set(token, { subject, resolve, reject, timeout });
      try {
        this.nc.publish(subject, data, { reply: `${inbox}.${token}`, headers });
      } catch (cause) {
        timeout.cancel();
        this.pending.delete(token);
        reject(new GatewayError("UNAVAILABLE", `bus request on ${subject} failed`, { cause }));
      }
    });
  }

  /** Fails every request still waiting and stops listening. */
  close(): void {
    this.sub?.unsubscribe();
    this.sub = undefined;
    for (const [token, waiting] of this.pending) {
      this.pending.delete(token);
      waiting.timeout.cancel();
      waiting.reject(new GatewayError("UNAVAILABLE", `the bus closed before ${waiting.subject} answered`));
    }
  }

  private inbox(): string {
    if (this.sub === undefined) {
      this.prefix = createInbox();
      this.sub = this.nc.subscribe(`${this.prefix}.*`, { callback: (err, msg) => this.onReply(err, msg) });
    }
    return this.prefix;
  }

  private onReply(err: Error | null, msg: Msg): void {
    if (err) return;
    const token = msg.subject.slice(this.prefix.length + 1);
    const waiting = this.pending.get(token);
    // A reply after its request timed out: nobody waits for it any more.
    if (waiting === undefined) return;
    this.pending.delete(token);
    waiting.timeout.cancel();
    // The server answers a request nobody subscribes to with an empty 503 status message.
    if (msg.data.length === 0 && msg.headers?.code === 503)
      waiting.reject(new NoServiceAnswers(waiting.subject));
    else waiting.resolve(msg);
  }
}
