import {
  parseAgentEventPayload,
  type AgentSubscribeParams,
  type AgentSubscribeResult,
  type AgentUnsubscribeParams,
  type AgentUnsubscribeResult,
  type ClientEvent,
  encodeJson,
  GatewayError,
  isFinal,
  receivedJson,
  type RunRecord,
} from "@gw/contracts";
import { type Logger, sleep } from "@gw/runtime";
import { isTerminalEvent, type RunEventLog, type RunRegistry, TERMINAL_SEQ } from "@gw/runs";
import type { CallContext } from "../call-context.js";
import { encodedEventFrame } from "../encoded-frames.js";
import type { EventHub } from "./event-hub.js";
import { publicRunEvent } from "./public-run-events.js";
import { type GatedEvent, ResumeGate } from "./resume-gate.js";
import type { RunEventRouter } from "./run-event-router.js";

export interface AgentSubscriptionsDeps {
  router: RunEventRouter;
  hub: EventHub;
  registry: RunRegistry;
  log: RunEventLog;
  logger: Logger;
  /** gateway.limits.maxSubscriptionsPerConnection: each one costs the edge bus interest and memory. */
  maxPerConnection: number;
}

/**
 * Reads of the store while a gap stays open, this far apart. The store takes the events from the
 * bus and may be behind its live delivery: a moment on a quiet host, but over the 420 ms the first
 * three reads cover on a loaded one (a resume on the other edge of a draining one lost 9 to 22
 * events in 3 of 4 tries with four gateways on 2 cores), so it is read for 3.4 s before the gap
 * is given up.
 */
const REFILL_DELAYS_MS = [20, 100, 300, 1_000, 2_000];


/** A lifecycle event's payload, or undefined (logged) when it is not one: it came from the bus or the run's event log. */
function lifePayload(event: ClientEvent, logger: Logger) {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(event.payloadJson).toString("utf8"));
  } catch {
    value = undefined;
  }
  const payload = parseAgentEventPayload(value);
  if (payload !== undefined) return payload;
  logger.error({ runId: event.runId, seq: event.seq }, "a run event that is not an agent event payload: not sent");
  return undefined;
}

/**
 * An event for a gate: whether it ends its run and, for the end, what a socket other than control
 * gets if that differs (a failure's words withheld); `life` false (an output event) needs no parse.
 * A lifecycle event that does not decode keeps its place in the order and goes to no one.
 */
function gated(event: ClientEvent, frame: Buffer, life: boolean, logger: Logger): GatedEvent {
  if (!life) return { seq: event.seq, frame, terminal: false };
  const payload = lifePayload(event, logger);
  if (payload === undefined) return { seq: event.seq, frame: null, terminal: false };
  if (!isTerminalEvent(payload)) return { seq: event.seq, frame, terminal: false };
  const shown = publicRunEvent(payload);
  if (shown === payload) return { seq: event.seq, frame, terminal: true };
  return { seq: event.seq, frame, terminal: true, publicFrame: encodedEventFrame("agent", encodeJson(shown)) };
}

/** A stored event (its part unknown: parsed to tell). */
const stored = (logger: Logger) => (event: ClientEvent): GatedEvent =>
  gated(event, encodedEventFrame("agent", receivedJson(event.payloadJson)), true, logger);

function keyOf(p: AgentUnsubscribeParams): string {
  if (p.runId !== undefined) return `run:${p.runId}`;
  if (p.sessionKey !== undefined) return `session:${p.sessionKey}`;
  return "all";
}

/** What a subscription answers names what it is about. */
function named(p: AgentUnsubscribeParams): { runId: string } | { sessionKey: string } | { all: true } {
  if (p.runId !== undefined) return { runId: p.runId };
  if (p.sessionKey !== undefined) return { sessionKey: p.sessionKey };
  return { all: true };
}

const statusOf = (record: RunRecord) => (record.state === "done" ? "ok" : record.state);

/**
 * `agent.subscribe` / `agent.unsubscribe` (docs/protocol.md, Runs and their events): which
 * runs' `agent` events a socket gets beyond its own runs (and, for control, every lifecycle).
 * A run subscription goes through a ResumeGate: live events are taken first, the stored ones
 * after `afterSeq` are sent, then the live ones, each once and in order, and it ends with the
 * run. Every subscription ends when its socket closes.
 */
export class AgentSubscriptions {
  private readonly byConn = new Map<string, Map<string, () => void>>();

  constructor(private readonly deps: AgentSubscriptionsDeps) {}

  async subscribe(p: AgentSubscribeParams, ctx: CallContext): Promise<AgentSubscribeResult> {
    const key = keyOf(p);
    this.checkRoom(ctx.connId, key);
    if (p.runId !== undefined) return this.subscribeRun(p.runId, p.afterSeq, key, ctx);
    if (p.sessionKey !== undefined) {
      ctx.assertSession(p.sessionKey);
      this.hold(ctx, key, this.deps.router.watchSession(ctx.connId, p.sessionKey));
    } else {
      if (ctx.access !== "control") {
        throw new GatewayError("FORBIDDEN", `role ${ctx.access} may not subscribe to every run's events (all): that is control's`);
      }
      this.hold(ctx, key, this.deps.router.addFirehose(ctx.connId));
    }
    await this.deps.router.flush();
    return { subscribed: true, ...named(p) };
  }

  unsubscribe(p: AgentUnsubscribeParams, ctx: CallContext): AgentUnsubscribeResult {
    return { unsubscribed: this.release(ctx.connId, keyOf(p)), ...named(p) };
  }

  private async subscribeRun(runId: string, afterSeq: number | undefined, key: string, ctx: CallContext): Promise<AgentSubscribeResult> {
    const record = await this.deps.registry.get(runId);
    if (record === null) {
      throw new GatewayError("NOT_FOUND", `unknown run: ${runId} (or its record is past runner.resultRetentionSeconds)`, { details: { runId } });
    }
    ctx.assertSession(record.sessionKey);
    this.release(ctx.connId, key);
    if (afterSeq === undefined && isFinal(record.state)) return { subscribed: false, runId, status: statusOf(record) };
    // Without afterSeq the gate starts at the first live event (and still mends gaps from the store).
    const gate = new ResumeGate(
      afterSeq,
      (event) => this.send(ctx.connId, key, event, unfollow),
      () => {
        this.mend(runId, gate).catch((err: unknown) => this.deps.logger.warn({ err, runId }, "cannot mend a gap in a run's events"));
      },
    );
    const follower = {
      targetId: ctx.connId,
      gate: (event: ClientEvent, frame: Buffer, life: boolean) => gate.offer(gated(event, frame, life, this.deps.logger)),
    };
    const unfollow = await this.deps.router.follow(runId, follower, { startedBy: record.edgeId, sessionKey: record.sessionKey });
    try {
      if (afterSeq !== undefined) await this.catchUp(runId, afterSeq, record, gate);
      gate.openGate();
    } catch (err) {
      unfollow();
      throw err;
    }
    // A run that was over before the subscription has no more to send: the kept events were all.
    const over = gate.ended || isFinal(record.state);
    if (over) unfollow();
    else this.hold(ctx, key, unfollow);
    const latest = isFinal(record.state) ? record : ((await this.deps.registry.get(runId)) ?? record);
    return { subscribed: !over, runId, status: statusOf(latest), ...(afterSeq === undefined ? {} : { lastSeq: gate.sent }) };
  }

  /** Sends the stored events after `afterSeq`, and what came live meanwhile, or says they are gone. */
  private async catchUp(runId: string, afterSeq: number, record: RunRecord, gate: ResumeGate): Promise<void> {
    const events = await this.deps.log.read(runId);
    const fromRunner = events.filter((e) => e.seq < TERMINAL_SEQ);
    const first = fromRunner[0]?.seq;
    if ((first !== undefined && first > afterSeq + 1) || (events.length === 0 && isFinal(record.state))) {
      throw this.gone(runId, afterSeq);
    }
    gate.fill(events.map(stored(this.deps.logger)));
    await this.refill(runId, gate);
    if (gate.hasGap) throw this.gone(runId, gate.sent);
  }

  /** Reads the store again, a little later each time, while the gate waits on a missing event. */
  private async refill(runId: string, gate: ResumeGate): Promise<void> {
    for (const delay of REFILL_DELAYS_MS) {
      if (!gate.hasGap) return;
      await sleep(delay);
      gate.fill((await this.deps.log.read(runId)).map(stored(this.deps.logger)));
    }
  }

  /** A live event came after a gap (the edge's bus connection lost messages): fill it from the store. */
  private async mend(runId: string, gate: ResumeGate): Promise<void> {
    try {
      await this.refill(runId, gate);
    } catch (err) {
      this.deps.logger.warn({ err, runId }, "cannot read a run's stored events to fill a gap");
    }
    if (!gate.hasGap) return;
    this.deps.logger.warn({ runId, after: gate.sent }, "a run's events after this seq are not kept: sending on without them");
    gate.skipGap();
  }

  private gone(runId: string, afterSeq: number): GatewayError {
    return new GatewayError(
      "NOT_FOUND",
      `the events of run ${runId} after seq ${afterSeq} are no longer kept (runner.eventRetentionSeconds, runner.eventRetentionMaxBytes): agent.wait gives its outcome`,
      { details: { runId, afterSeq } },
    );
  }

  private send(connId: string, key: string, event: GatedEvent, unfollow: () => void): void {
    const target = this.deps.hub.target(connId);
    const frame = event.publicFrame === undefined || target?.seesErrorDetail() ? event.frame : event.publicFrame;
    if (frame !== null && target?.accepts("agent")) target.sendText(frame);
    // The run is over: so is its subscription (after this event, outside the router's loop).
    if (event.terminal) setImmediate(() => this.release(connId, key, unfollow));
  }

  /** Refuses a new subscription past the cap; renewing one a socket holds (same key) is always fine. */
  private checkRoom(connId: string, key: string): void {
    const subs = this.byConn.get(connId);
    const max = this.deps.maxPerConnection;
    if (subs === undefined || subs.size < max || subs.has(key)) return;
    throw new GatewayError("RATE_LIMITED", `too many subscriptions on this connection (max ${max}): agent.unsubscribe first`, {
      details: { limit: "maxSubscriptionsPerConnection", max },
    });
  }

  private hold(ctx: CallContext, key: string, cancel: () => void): void {
    let subs = this.byConn.get(ctx.connId);
    if (subs === undefined) {
      subs = new Map();
      this.byConn.set(ctx.connId, subs);
      ctx.onClose(() => {
        const left = this.byConn.get(ctx.connId);
        this.byConn.delete(ctx.connId);
        for (const release of left?.values() ?? []) release();
      });
    }
    subs.get(key)?.();
    subs.set(key, cancel);
  }

  /** Ends one subscription of a socket (only `which`, when given); false if it had none by that name. */
  private release(connId: string, key: string, which?: () => void): boolean {
    const subs = this.byConn.get(connId);
    const cancel = subs?.get(key);
    if (cancel === undefined || (which !== undefined && cancel !== which)) return false;
    subs!.delete(key);
    cancel();
    return true;
  }
}
