import type { Bus, Subjects, Unsubscribe } from "@gw/bus";
import {
  type AgentEventPayload,
  AgentEventPayloadSchema,
  type ClientEvent,
  decodeClientEvent,
  decodeJson,
  encodeJson,
  receivedJson,
  type RunRecord,
} from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { finalRecordOf } from "@gw/runs";
import { encodedEventFrame } from "../ws/encoded-frames.js";
import type { EventHub } from "./event-hub.js";

/** Who on this edge wants a run's events: a socket (by id) and/or an in-process listener. */
export interface RunFollower {
  targetId?: string;
  /** `final` is the run's recorded outcome, carried by the terminal event. */
  onEvent?: (payload: AgentEventPayload, final?: RunRecord) => void;
}

interface Decoded {
  payload: AgentEventPayload;
  final: RunRecord | undefined;
}

interface RunState {
  lastSeq: number;
  followers: Set<RunFollower>;
  sub: Unsubscribe | undefined;
  touchedAt: number;
}

const SWEEP_MS = 30_000;

/** The event's WebSocket frame: built once per event, shared by every socket it reaches. */
const frameOf = (event: ClientEvent) => encodedEventFrame(event.event, receivedJson(event.payloadJson));
const IDLE_FORGET_MS = 60_000;

/**
 * Routes `agent` events from the bus to this edge's sockets (DESIGN §6). Run subjects name the
 * edge that started the run (`run.<edge>.<run>.events`): the edge listens to its own runs with
 * one subscription for its lifetime, so starting a run costs no subscribe and no unsubscribe on
 * the bus. A run started elsewhere that someone here follows (`agent.wait`) gets a subscription
 * of its own (`run.*.<run>.events`); while the edge holds a control connection it also listens
 * to every run (`run.*.*.events`). An event can thus arrive twice: the per-run seq drops the
 * copy, so each socket sees each event once and in order.
 */
export class RunEventRouter {
  private readonly runs = new Map<string, RunState>();
  private wildcard: Unsubscribe | undefined;
  private readonly ownRuns: Unsubscribe;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly deps: { bus: Bus; subjects: Subjects; hub: EventHub; logger: Logger; edgeId: string }) {
    this.ownRuns = deps.bus.subscribe(deps.subjects.runEvents(deps.edgeId, "*"), (data) => this.onEvent(data));
    deps.hub.onTargetsChanged(() => this.updateWildcard());
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  /**
   * Resolves once the subscription has reached the bus, so no event published later is missed.
   * `flush: false` skips that round trip for a caller whose next step is itself a message on
   * this process's bus connection (dispatching the run): the bus handles one connection's
   * messages in order, so the subscription is in place before the run can start.
   */
  async follow(
    runId: string,
    follower: RunFollower,
    opts: { flush?: boolean; startedBy?: string } = {},
  ): Promise<() => void> {
    const unfollow = this.followNow(runId, follower, opts.startedBy);
    if (opts.flush !== false) await this.deps.bus.flush();
    return unfollow;
  }

  /**
   * `follow` without waiting at all. A run this edge started (`startedBy` is this edge) needs no
   * subscription of its own; any other gets one, queued on the bus connection, so a message the
   * caller sends in the same turn leaves after it.
   */
  followNow(runId: string, follower: RunFollower, startedBy?: string): () => void {
    const state = this.state(runId);
    state.followers.add(follower);
    if (startedBy !== this.deps.edgeId) {
      state.sub ??= this.deps.bus.subscribe(this.deps.subjects.runEvents("*", runId), (data) => this.onEvent(data));
    }
    return () => {
      state.followers.delete(follower);
      if (state.followers.size === 0) {
        state.sub?.();
        state.sub = undefined;
        state.touchedAt = Date.now();
      }
    };
  }

  /**
   * Sends a follower's socket the events of its run that arrived before it had a socket (in
   * order, as frames), unless the socket has them already: as a control connection, or through
   * another follower of the run on the same socket.
   */
  replay(runId: string, follower: RunFollower, events: AgentEventPayload[]): void {
    const id = follower.targetId;
    if (id === undefined || events.length === 0 || this.deps.hub.isControl(id)) return;
    const state = this.runs.get(runId);
    for (const other of state?.followers ?? []) if (other !== follower && other.targetId === id) return;
    const target = this.deps.hub.target(id);
    if (target?.accepts("agent") !== true) return;
    for (const payload of events) target.sendText(encodedEventFrame("agent", encodeJson(payload)));
  }

  close(): void {
    clearInterval(this.sweeper);
    this.ownRuns();
    this.wildcard?.();
    this.wildcard = undefined;
    for (const state of this.runs.values()) state.sub?.();
    this.runs.clear();
  }

  private state(runId: string): RunState {
    let state = this.runs.get(runId);
    if (state === undefined) {
      state = { lastSeq: 0, followers: new Set(), sub: undefined, touchedAt: Date.now() };
      this.runs.set(runId, state);
    }
    return state;
  }

  private updateWildcard(): void {
    const wanted = this.deps.hub.hasControl();
    if (wanted && this.wildcard === undefined) {
      this.wildcard = this.deps.bus.subscribe(this.deps.subjects.runEvents("*", "*"), (data) => this.onEvent(data));
    } else if (!wanted && this.wildcard !== undefined) {
      this.wildcard();
      this.wildcard = undefined;
    }
  }

  private onEvent(data: Uint8Array): void {
    let event: ClientEvent;
    try {
      event = decodeClientEvent(data);
    } catch (err) {
      this.deps.logger.warn({ err }, "dropped an undecodable run event");
      return;
    }
    const state = this.state(event.runId);
    if (event.seq <= state.lastSeq) return;
    state.lastSeq = event.seq;
    state.touchedAt = Date.now();
    let frame: Buffer | undefined;
    for (const target of this.deps.hub.controlTargets()) {
      if (target.accepts("agent")) target.sendText((frame ??= frameOf(event)));
    }
    // Control connections have the frame already; a socket following twice gets it once.
    let followed: Set<string> | undefined;
    let decoded: Decoded | null | undefined;
    for (const follower of [...state.followers]) {
      const id = follower.targetId;
      if (id !== undefined && !this.deps.hub.isControl(id) && !followed?.has(id)) {
        (followed ??= new Set()).add(id);
        const target = this.deps.hub.target(id);
        if (target?.accepts("agent")) target.sendText((frame ??= frameOf(event)));
      }
      if (follower.onEvent) {
        decoded ??= this.decode(event);
        if (decoded !== null) follower.onEvent(decoded.payload, decoded.final);
      }
    }
  }

  /** The event for in-process followers, through its schemas; null (and logged) if malformed. */
  private decode(event: ClientEvent): Decoded | null {
    try {
      const payload = decodeJson(event.payloadJson, AgentEventPayloadSchema, "agent event payload on the bus");
      return { payload, final: finalRecordOf(event) };
    } catch (err) {
      this.deps.logger.warn({ err, runId: event.runId }, "dropped a malformed run event for in-process followers");
      return null;
    }
  }

  /** Forgets runs nobody follows once they have been quiet for a while (dedupe state only). */
  private sweep(): void {
    const cutoff = Date.now() - IDLE_FORGET_MS;
    for (const [runId, state] of this.runs) {
      if (state.followers.size === 0 && state.touchedAt < cutoff) this.runs.delete(runId);
    }
  }
}
