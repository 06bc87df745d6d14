import { GatewayError, isGatewayError } from "@gw/contracts";
import { NoServiceAnswers } from "./bus.js";
import { Deadlines } from "./deadlines.js";
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
import { toCallerError } from "./reply.js";
import { tracingEnabled } from "./spans.js";
import { SubjectRegistry } from "./subject-registry.js";
import { currentTrace, runInTrace, startSpan, type TraceContext } from "./trace-context.js";

/** A handler that reports each request's outcome; a synchronous answer stays synchronous. */
function metered(handler: RequestHandler, method: string, observer: BusObserver): RequestHandler {
  const code = (err: unknown) => (isGatewayError(err) ? err.code : "INTERNAL");
  return (data, ctx) => {
    const end = observer.begin(method);
    let reply: Uint8Array | Promise<Uint8Array>;
    try {
      reply = handler(data, ctx);
    } catch (err) {
      end(code(err));
      throw err;
    }
    if (reply instanceof Uint8Array) {
      end("ok");
      return reply;
    }
    return reply.then(
      (value) => {
        end("ok");
        return value;
      },
      (err: unknown) => {
        end(code(err));
        throw err;
      },
    );
  };
}

function childSpanHandler(handler: RequestHandler, trace: TraceContext): RequestHandler {
  return (data, ctx) => runInTrace(startSpan(trace), () => handler(data, ctx));
}

/**
 * Work the bus hands to handlers and subscribers: run on a later microtask, in the order it was
 * queued, each in the trace it was queued from. One microtask runs everything queued before it
 * does (and what that queues meanwhile). A `queueMicrotask` per message made an AsyncResource
 * for each, to carry the async context, which under a run's stream of events cost more than
 * handing the message over.
 */
class Deliveries {
  private queue: Array<{ trace: TraceContext | undefined; run: () => void }> = [];
  private scheduled = false;

  add(trace: TraceContext | undefined, run: () => void): void {
    this.queue.push({ trace, run });
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.drain());
  }

  private drain(): void {
    // Delivered in batches: what a delivery queues runs after the batch, still in this microtask.
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        for (const { trace, run } of batch) runInTrace(trace, run);
      }
    } finally {
      this.scheduled = false;
    }
  }
}

/** The embedded-mode bus: same semantics as the NATS bus, without a network. */
export class InProcessBus implements Bus {
  private readonly handlers = new SubjectRegistry<RequestHandler>();
  private readonly subscribers = new SubjectRegistry<MessageHandler>();
  private readonly deliveries = new Deliveries();
  private readonly deadlines = new Deadlines();
  private closed = false;

  constructor(
    private readonly onHandlerError?: HandlerErrorSink,
    private readonly observer?: BusObserver,
  ) {}

  /** Not `async`: the promise below is the only one a request makes (each costs the async-context hooks). */
  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<Uint8Array> {
    if (this.closed) return Promise.reject(new GatewayError("UNAVAILABLE", "the bus is closed"));
    const [target] = this.handlers.targets(subject);
    if (target === undefined) return Promise.reject(new NoServiceAnswers(subject));
    const deadline = Date.now() + opts.timeoutMs;
    // Copy the payload so a handler can never alias the caller's buffer, as over a wire (from
    // Node's buffer pool, as publish does).
    const copy = Buffer.from(data);
    // With span export on, the handler runs in a span of its own (a child of the caller's), as
    // over NATS; off, it runs in the caller's trace, which names the same request.
    const trace = tracingEnabled() ? currentTrace() : undefined;
    const call = trace === undefined ? target.handler : childSpanHandler(target.handler, trace);
    return new Promise<Uint8Array>((resolve, reject) => {
      const timeout = this.deadlines.start(opts.timeoutMs, () =>
        reject(new GatewayError("TIMEOUT", `no reply on ${subject} within ${opts.timeoutMs} ms`)),
      );
      const fail = (err: unknown) => {
        timeout.cancel();
        reject(toCallerError(err, subject, this.onHandlerError));
      };
      const answer = (reply: Uint8Array) => {
        timeout.cancel();
        resolve(reply);
      };
      // The handler runs on a later microtask, as a reply over a wire never comes synchronously.
      this.deliveries.add(currentTrace(), () => {
        let reply: Uint8Array | Promise<Uint8Array>;
        try {
          reply = call(copy, { subject, deadline });
        } catch (err) {
          fail(err);
          return;
        }
        if (reply instanceof Uint8Array) answer(reply);
        else Promise.resolve(reply).then(answer, fail);
      });
    });
  }

  handle(subject: string, handler: RequestHandler, opts?: HandleOptions): Unsubscribe {
    const method = opts?.method;
    const served = method === undefined || this.observer === undefined ? handler : metered(handler, method, this.observer);
    return this.handlers.add({ pattern: subject, queue: opts?.queue, handler: served });
  }

  publish(subject: string, data: Uint8Array): void {
    if (this.closed) return;
    const trace = currentTrace();
    for (const target of this.subscribers.targets(subject)) {
      // Each subscriber its own copy, as over a wire; Buffer.from copies a small message into
      // Node's shared pool instead of allocating an ArrayBuffer for it.
      const copy = Buffer.from(data);
      this.deliveries.add(trace, () => {
        try {
          target.handler(copy, subject);
        } catch (err) {
          this.onHandlerError?.(err, subject);
        }
      });
    }
  }

  subscribe(subject: string, handler: MessageHandler, opts?: HandleOptions): Unsubscribe {
    return this.subscribers.add({ pattern: subject, queue: opts?.queue, handler });
  }

  async flush(): Promise<void> {
    // Deliveries are queued as microtasks; one macrotask turn lets all of them run.
    await new Promise((resolve) => setImmediate(resolve));
  }

  isHealthy(): boolean {
    return !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    this.subscribers.clear();
  }
}
