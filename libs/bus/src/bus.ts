import { GatewayError } from "@gw/contracts";

/**
 * The Bus port: request/reply with a deadline, queue-group handlers, publish and
 * broadcast subscriptions. Implemented over NATS (distributed) and in process
 * (embedded); both pass the same contract suite (bus.contract.ts).
 *
 * Errors: `request` rejects with a GatewayError — `UNAVAILABLE` at once when nobody
 * handles the subject (or the bus is disconnected), `TIMEOUT` when the deadline
 * passes, and the handler's own typed error when it throws one. A handler that
 * throws anything else yields `INTERNAL` and its message never reaches the caller.
 */

export interface RequestContext {
  subject: string;
  /** Absolute deadline (ms since the epoch) the caller will wait until. */
  deadline: number;
}

export type RequestHandler = (data: Uint8Array, ctx: RequestContext) => Promise<Uint8Array> | Uint8Array;

export type MessageHandler = (data: Uint8Array, subject: string) => void;

export interface RequestOptions {
  timeoutMs: number;
}

export interface HandleOptions {
  /** Replicas in one queue group share the subject's load: each request reaches one of them. */
  queue?: string;
  /** The request-metrics method label of a request handler (`<service>.<method>`); unmetered without. */
  method?: string;
}

/** Watches the requests a bus's handlers serve (the service's request metrics). */
export interface BusObserver {
  /** A request to `method` begins; the function it returns is called once with its outcome ("ok" or an error code). */
  begin(method: string): (outcome: string) => void;
}

export type Unsubscribe = () => void;

export interface Bus {
  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<Uint8Array>;
  handle(subject: string, handler: RequestHandler, opts?: HandleOptions): Unsubscribe;
  publish(subject: string, data: Uint8Array): void;
  /** Every subscriber (per queue group: one of them) gets each message; `*` and `>` wildcards work. */
  subscribe(subject: string, handler: MessageHandler, opts?: HandleOptions): Unsubscribe;
  /** Resolves when everything published so far has reached the server (NATS) or the subscribers (in process). */
  flush(): Promise<void>;
  isHealthy(): boolean;
  close(): Promise<void>;
}

/** What `request` rejects with when nobody handles the subject: the request ran nowhere. */
export class NoServiceAnswers extends GatewayError {
  constructor(subject: string) {
    super("UNAVAILABLE", `no service answers ${subject}`);
  }
}

/** Called with any error a handler throws that is not a GatewayError, so it can be logged. */
export type HandlerErrorSink = (err: unknown, subject: string) => void;
