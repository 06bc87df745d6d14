import { GatewayError } from "@gw/contracts";
import { headers, type Msg, type NatsConnection } from "@nats-io/nats-core";
import type {
  Bus,
  BusObserver,
  HandleOptions,
  HandlerErrorSink,
  MessageHandler,
  RequestHandler,
  RequestOptions,
  Unsubscribe,
} from "./bus.js";
import { RequestMux } from "./nats-request-mux.js";
import { decodeReply, encodeReplyError, encodeReplyResult, toCallerError } from "./reply.js";
import { readTraceHeaders, runInTrace, startSpan, writeTraceHeaders } from "./trace-context.js";

const DEADLINE_HEADER = "Gw-Deadline";

/** The distributed-mode bus. Replies travel inside an RpcReply envelope so typed errors survive the wire. */
export class NatsBus implements Bus {
  private healthy = true;
  private readonly requests: RequestMux;

  constructor(
    private readonly nc: NatsConnection,
    private readonly onHandlerError?: HandlerErrorSink,
    private readonly observer?: BusObserver,
  ) {
    this.requests = new RequestMux(nc);
    // Ends when the connection closes; it cannot fail, but nothing here may go unhandled.
    this.watchStatus().catch(() => {
      this.healthy = false;
    });
  }

  private async watchStatus(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === "disconnect" || status.type === "close") this.healthy = false;
      else if (status.type === "reconnect") this.healthy = true;
    }
    this.healthy = false;
  }

  async request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<Uint8Array> {
    if (!this.isHealthy()) throw new GatewayError("UNAVAILABLE", "the bus is not connected");
    const deadline = Date.now() + opts.timeoutMs;
    const hdrs = headers();
    hdrs.set(DEADLINE_HEADER, String(deadline));
    writeTraceHeaders(hdrs);
    const reply = await this.requests.request(subject, data, hdrs, opts.timeoutMs);
    return decodeReply(reply.data);
  }

  handle(subject: string, handler: RequestHandler, opts?: HandleOptions): Unsubscribe {
    const sub = this.nc.subscribe(subject, {
      queue: opts?.queue,
      callback: (err, msg) => {
        if (err) {
          this.onHandlerError?.(err, subject);
          return;
        }
        // answer() turns a handler's failure into an error reply; what is left (a reply the
        // connection refused while draining) goes to the error sink, never unhandled.
        this.answer(msg, handler, opts?.method).catch((err: unknown) => this.onHandlerError?.(err, subject));
      },
    });
    return () => sub.unsubscribe();
  }

  /** Handles one request in the caller's trace (its `traceparent` header), metered when it has a method label. */
  private answer(msg: Msg, handler: RequestHandler, method: string | undefined): Promise<void> {
    const trace = startSpan(readTraceHeaders(msg.headers));
    return runInTrace(trace, async () => {
      const end = method === undefined ? undefined : this.observer?.begin(method);
      const deadline = Number(msg.headers?.get(DEADLINE_HEADER)) || Date.now() + 30_000;
      let reply: Uint8Array;
      try {
        reply = encodeReplyResult(await handler(msg.data, { subject: msg.subject, deadline }));
        end?.("ok");
      } catch (err) {
        const callerError = toCallerError(err, msg.subject, this.onHandlerError);
        end?.(callerError.code);
        reply = encodeReplyError(callerError);
      }
      this.respond(msg, reply);
    });
  }

  private respond(msg: Msg, reply: Uint8Array): void {
    // A reply after the caller gave up is harmless: nobody listens on its inbox any more.
    if (this.nc.isClosed()) return;
    // One the server would refuse (over its max_payload) becomes an error the caller gets now,
    // instead of a silence it waits out to its timeout.
    const max = this.nc.info?.max_payload;
    if (max !== undefined && reply.byteLength > max) {
      const err = new GatewayError(
        "PAYLOAD_TOO_LARGE",
        `the answer to ${msg.subject} is ${reply.byteLength} bytes, above the bus's max_payload (${max})`,
      );
      this.onHandlerError?.(err, msg.subject);
      reply = encodeReplyError(err);
    }
    msg.respond(reply);
  }

  publish(subject: string, data: Uint8Array): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(subject, data);
  }

  subscribe(subject: string, handler: MessageHandler, opts?: HandleOptions): Unsubscribe {
    const sub = this.nc.subscribe(subject, {
      queue: opts?.queue,
      callback: (err, msg) => {
        if (err) {
          this.onHandlerError?.(err, subject);
          return;
        }
        try {
          handler(msg.data, msg.subject);
        } catch (handlerErr) {
          this.onHandlerError?.(handlerErr, msg.subject);
        }
      },
    });
    return () => sub.unsubscribe();
  }

  async flush(): Promise<void> {
    try {
      await this.nc.flush();
    } catch (cause) {
      // nats.js fails a flush in flight when the connection drops ("connection disconnected"):
      // the caller gets the catalogue's retryable error, never the library's text.
      throw new GatewayError("UNAVAILABLE", "the bus connection dropped; try again", { cause });
    }
  }

  isHealthy(): boolean {
    return this.healthy && !this.nc.isClosed();
  }

  async close(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain();
    this.requests.close();
  }
}
