import type { Bus, Subjects, Unsubscribe } from "@gw/bus";
import {
  type AgentEventPayload,
  type ClientEvent,
  decodeAgentEventPayload,
  decodeClientEvent,
  encodeJson,
  receivedJson,
  type RunRecord,
} from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { finalRecordOf } from "@gw/runs";
import { encodedEventFrame } from "../encoded-frames.js";
import type { EventHub, EventTarget } from "./event-hub.js";
import { publicLifecycleFrame, publicRunEvent } from "./public-run-events.js";
import { plannedSubjects } from "./run-interest.js";

/** Who on this edge wants a run's events: a socket (by id), an in-process listener, or a gate. */
export interface RunFollower {
  targetId?: string;
  /** `final` is the run's recorded outcome, with the terminal event. */
  onEvent?: (payload: AgentEventPayload, final?: RunRecord) => void;
  /**
   * Takes the run's events for `targetId` instead of the socket (a resume: resume-gate.ts), and
   * the socket gets the run's events from nowhere else, so their order is the gate's.
   */
  gate?: (event: ClientEvent, frame: Buffer, life: boolean) => void;
}

export interface FollowOptions {
  /** The edge that started the run: this edge's own runs come on its standing subscription. */
  startedBy?: string;
  /** The run's session, when known: a subscribed session already brings its events. */
  sessionKey?: string;
  /** Resolve only once the subscription reached the bus (default true). */
  flush?: boolean;
}

interface RunState {
  lastSeq: number;
  followers: Set<RunFollower>;
  sessionKey: string | undefined;
  /** The run's `final` message, which comes just before its terminal event. */
  final: ClientEvent | undefined;
  touchedAt: number;
}

const SWEEP_MS = 30_000;
const IDLE_FORGET_MS = 60_000;

/** The event's WebSocket frame: built once per event, shared by every socket it reaches. */
const frameOf = (event: ClientEvent) => encodedEventFrame(event.event, receivedJson(event.payloadJson));

function addTo(index: Map<string, Set<string>>, key: string, member: string): void {
  const members = index.get(key);
  if (members === undefined) index.set(key, new Set([member]));
  else members.add(member);
}

/**
 * Routes `agent` events from the bus to this edge's sockets (DESIGN §6, docs/scaling.md). A
 * run's events come on subjects that name the edge that started it, its session, the run and the
 * part (lifecycle, output, final record), so the edge subscribes to what its sockets want and no
 * more: its own runs for its lifetime; every run's lifecycle while it holds a control
 * connection; every run's output while a socket asked for the firehose; a session's runs, or one
 * run, while someone follows them. Interest is counted per socket and follower, and the
 * subscriptions follow it (plannedSubjects), new ones made before old ones go, so nothing falls
 * in between; an event that arrives twice meanwhile is dropped by its per-run seq. Each socket
 * gets each event once, in order.
 */
export class RunEventRouter {
  private readonly runs = new Map<string, RunState>();
  /** The runs started elsewhere that someone here follows, by id, with their session when known. */
  private readonly foreign = new Map<string, string | undefined>();
  private readonly sessions = new Map<string, Set<string>>();
  private readonly firehoses = new Set<string>();
  private readonly subs = new Map<string, Unsubscribe>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly onMessage = (data: Uint8Array, subject: string) => this.onBusMessage(data, subject);

  constructor(private readonly deps: { bus: Bus; subjects: Subjects; hub: EventHub; logger: Logger; edgeId: string }) {
    this.replan();
    deps.hub.onTargetsChanged(() => this.onTargetsChanged());
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  /** `followNow`, resolved once the subscription reached the bus unless `flush: false`. */
  async follow(runId: string, follower: RunFollower, opts: FollowOptions = {}): Promise<() => void> {
    const unfollow = this.followNow(runId, follower, opts);
    if (opts.flush !== false) await this.deps.bus.flush();
    return unfollow;
  }

  /**
   * Follows a run without waiting: a subscription, if it needs one, is queued on the bus
   * connection, so a message the caller sends in the same turn (the dispatch) leaves after it.
   */
  followNow(runId: string, follower: RunFollower, opts: Omit<FollowOptions, "flush"> = {}): () => void {
    const state = this.state(runId);
    state.followers.add(follower);
    state.sessionKey ??= opts.sessionKey;
    if (opts.startedBy !== this.deps.edgeId && !this.foreign.has(runId)) {
      this.foreign.set(runId, state.sessionKey);
      this.replan();
    }
    return () => {
      if (!state.followers.delete(follower) || state.followers.size > 0) return;
      state.touchedAt = Date.now();
      state.final = undefined;
      if (this.foreign.delete(runId)) this.replan();
    };
  }

  /** The agent events of every run on `sessionKey` reach this socket until the function returned is called. */
  watchSession(targetId: string, sessionKey: string): () => void {
    addTo(this.sessions, sessionKey, targetId);
    this.replan();
    return () => {
      const watchers = this.sessions.get(sessionKey);
      if (!watchers?.delete(targetId)) return;
      if (watchers.size === 0) this.sessions.delete(sessionKey);
      this.replan();
    };
  }

  /** Every run's events reach this socket (the firehose) until the function returned is called. */
  addFirehose(targetId: string): () => void {
    this.firehoses.add(targetId);
    this.replan();
    return () => {
      if (this.firehoses.delete(targetId)) this.replan();
    };
  }

  /** Resolves once every subscription made so far has reached the bus. */
  flush(): Promise<void> {
    return this.deps.bus.flush();
  }

  /** The subscriptions this edge holds now (for tests and docs/scaling.md's counts). */
  subscriptions(): string[] {
    return [...this.subs.keys()].sort();
  }

  /**
   * Sends a follower's socket the events of its run that arrived before it had a socket (in
   * order, as frames), except those it received anyway: through another follower of the run,
   * as a control connection (lifecycle), or by a session or firehose subscription.
   */
  replay(runId: string, follower: RunFollower, events: AgentEventPayload[]): void {
    const id = follower.targetId;
    if (id === undefined || events.length === 0) return;
    const state = this.runs.get(runId);
    for (const other of state?.followers ?? []) if (other !== follower && other.targetId === id) return;
    const target = this.deps.hub.target(id);
    if (target?.accepts("agent") !== true) return;
    const sessionKey = state?.sessionKey;
    const detailed = target.seesErrorDetail();
    for (const payload of events) {
      const life = payload.stream === "lifecycle";
      if (this.reachesAnyway(id, life, sessionKey)) continue;
      target.sendText(encodedEventFrame("agent", encodeJson(detailed ? payload : publicRunEvent(payload))));
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const unsubscribe of this.subs.values()) unsubscribe();
    this.subs.clear();
    this.runs.clear();
  }

  private reachesAnyway(targetId: string, life: boolean, sessionKey: string | undefined): boolean {
    if (this.firehoses.has(targetId)) return true;
    if (life && this.deps.hub.isControl(targetId)) return true;
    return sessionKey !== undefined && this.sessions.get(sessionKey)?.has(targetId) === true;
  }

  /** A control connection came or went (its socket's own subscriptions end with it: agent-subscriptions.ts). */
  private onTargetsChanged(): void {
    this.replan();
  }

  /** Brings the bus subscriptions to what the interest needs: the new ones first, then the old ones go. */
  private replan(): void {
    const foreign = [...this.foreign].map(([runId, sessionKey]) => ({ runId, sessionKey }));
    const wanted = plannedSubjects(this.deps.subjects, this.deps.edgeId, {
      everyLifecycle: this.deps.hub.hasControl() || this.firehoses.size > 0,
      everyOutput: this.firehoses.size > 0,
      sessions: this.sessions.keys(),
      runs: foreign,
    });
    for (const subject of wanted) {
      if (!this.subs.has(subject)) this.subs.set(subject, this.deps.bus.subscribe(subject, this.onMessage));
    }
    for (const [subject, unsubscribe] of this.subs) {
      if (wanted.has(subject)) continue;
      unsubscribe();
      this.subs.delete(subject);
    }
  }

  private state(runId: string): RunState {
    let state = this.runs.get(runId);
    if (state === undefined) {
      state = { lastSeq: 0, followers: new Set(), sessionKey: undefined, final: undefined, touchedAt: Date.now() };
      this.runs.set(runId, state);
    }
    return state;
  }

  private onBusMessage(data: Uint8Array, subject: string): void {
    let event: ClientEvent;
    try {
      event = decodeClientEvent(data);
    } catch (err) {
      this.deps.logger.warn({ err }, "dropped an undecodable run event");
      return;
    }
    if (subject.endsWith(".final")) {
      // Kept for the in-process followers of the terminal event that comes next.
      const state = this.runs.get(event.runId);
      if (state !== undefined && state.followers.size > 0) state.final = event;
      return;
    }
    const state = this.state(event.runId);
    if (event.seq <= state.lastSeq) return;
    state.lastSeq = event.seq;
    state.touchedAt = Date.now();
    state.sessionKey ??= event.sessionKey;
    this.deliver(event, state, subject.endsWith(".life"));
  }

  private deliver(event: ClientEvent, state: RunState, life: boolean): void {
    let frame: Buffer | undefined;
    // What sockets other than control get: the same frame, but for a lifecycle error whose
    // words stay with the operators (public-run-events.ts).
    let shown: Buffer | undefined;
    const frameFor = (target: EventTarget): Buffer => {
      frame ??= frameOf(event);
      if (!life || target.seesErrorDetail()) return frame;
      return (shown ??= publicLifecycleFrame(event) ?? frame);
    };
    const sent = new Set<string>();
    const send = (target: EventTarget | undefined) => {
      if (target === undefined || sent.has(target.id)) return;
      sent.add(target.id);
      if (target.accepts("agent")) target.sendText(frameFor(target));
    };
    const followers = [...state.followers];
    // Gated sockets get this run's events from their gate alone, in its order.
    for (const follower of followers) {
      if (follower.gate === undefined || follower.targetId === undefined) continue;
      sent.add(follower.targetId);
      follower.gate(event, (frame ??= frameOf(event)), life);
    }
    for (const follower of followers) if (follower.gate === undefined && follower.targetId !== undefined) send(this.deps.hub.target(follower.targetId));
    if (life) for (const target of this.deps.hub.controlTargets()) send(target);
    for (const id of this.firehoses) send(this.deps.hub.target(id));
    for (const id of this.sessions.get(event.sessionKey) ?? []) send(this.deps.hub.target(id));
    let decoded: { payload: AgentEventPayload; final: RunRecord | undefined } | null | undefined;
    for (const follower of followers) {
      if (follower.onEvent === undefined) continue;
      decoded ??= this.decode(event, state);
      if (decoded !== null) follower.onEvent(decoded.payload, decoded.final);
    }
  }

  /** The event for in-process followers, through its schemas; null (and logged) if malformed. */
  private decode(event: ClientEvent, state: RunState): { payload: AgentEventPayload; final: RunRecord | undefined } | null {
    try {
      const payload = decodeAgentEventPayload(event.payloadJson);
      const final = state.final?.seq === event.seq ? finalRecordOf(state.final) : undefined;
      return { payload, final };
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
