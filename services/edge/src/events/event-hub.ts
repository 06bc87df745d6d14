import type { Bus, Subjects, Unsubscribe } from "@gw/bus";
import { type ClientEvent, decodeClientEvent, receivedJson, type Role } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import { type EventFamily, eventFamily } from "../auth/permissions.js";
import { encodedEventFrame } from "../encoded-frames.js";

/** What the hub needs of a WebSocket connection. */
export interface EventTarget {
  readonly id: string;
  readonly role: Role | undefined;
  /** Whether the connection's access lets it receive events of this family (auth/permissions.ts). */
  accepts(family: EventFamily): boolean;
  /** Sends an already serialised text frame (a string, or its UTF-8 bytes). */
  sendText(frame: string | Buffer): void;
  /** Whether a run's error reaches it in the failure's own words (auth/permissions.ts `seesErrorDetail`). */
  seesErrorDetail(): boolean;
}

function addToIndex(index: Map<string, Set<string>>, key: string, member: string): void {
  const members = index.get(key);
  if (members === undefined) index.set(key, new Set([member]));
  else members.add(member);
}

/**
 * Delivers events from the bus to this edge's sockets. Session events arrive on the
 * `session` broadcast and reach every `control` connection plus the connections watching
 * that session; control-plane events (pairing, devices) arrive on the `control` broadcast and
 * reach control connections only. The edge subscribes to a broadcast only while it holds a
 * connection that could want it, so idle edges cost the bus nothing. Every socket is also
 * asked whether its access takes the event's family: the permission table filters events as
 * it filters methods.
 */
export class EventHub {
  private readonly targets = new Map<string, EventTarget>();
  /** The control connections, kept apart so fan-out and "any control?" never scan every socket. */
  private readonly controls = new Map<string, EventTarget>();
  private readonly sessionWatchers = new Map<string, Set<string>>();
  private readonly watchedByTarget = new Map<string, Set<string>>();
  private sessionSub: Unsubscribe | undefined;
  private controlSub: Unsubscribe | undefined;
  private readonly changeListeners: Array<() => void> = [];

  constructor(private readonly deps: { bus: Bus; subjects: Subjects; logger: Logger }) {}

  /** Called once a connection has completed `connect` (its role is known). */
  add(target: EventTarget): void {
    this.targets.set(target.id, target);
    if (target.role === "control") this.controls.set(target.id, target);
    this.updateSessionSubscription();
    for (const listener of this.changeListeners) listener();
  }

  remove(targetId: string): void {
    if (!this.targets.delete(targetId)) return;
    this.controls.delete(targetId);
    for (const key of this.watchedByTarget.get(targetId) ?? []) this.unwatchSession(targetId, key);
    this.watchedByTarget.delete(targetId);
    this.updateSessionSubscription();
    for (const listener of this.changeListeners) listener();
  }

  /** Other event routers (run events) follow which connections exist and which are control. */
  onTargetsChanged(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  target(targetId: string): EventTarget | undefined {
    return this.targets.get(targetId);
  }

  controlTargets(): Iterable<EventTarget> {
    return this.controls.values();
  }

  watchSession(targetId: string, key: string): void {
    if (!this.targets.has(targetId)) return;
    addToIndex(this.sessionWatchers, key, targetId);
    addToIndex(this.watchedByTarget, targetId, key);
    this.updateSessionSubscription();
  }

  unwatchSession(targetId: string, key: string): void {
    const watchers = this.sessionWatchers.get(key);
    watchers?.delete(targetId);
    if (watchers?.size === 0) this.sessionWatchers.delete(key);
    this.watchedByTarget.get(targetId)?.delete(key);
    this.updateSessionSubscription();
  }

  /** Resolves once the edge's subscriptions have reached the bus, so nothing published later is missed. */
  flush(): Promise<void> {
    return this.deps.bus.flush();
  }

  close(): void {
    this.sessionSub?.();
    this.sessionSub = undefined;
    this.controlSub?.();
    this.controlSub = undefined;
  }

  isControl(targetId: string): boolean {
    return this.controls.has(targetId);
  }

  hasControl(): boolean {
    return this.controls.size > 0;
  }

  private updateSessionSubscription(): void {
    this.updateControlSubscription();
    const wanted = this.sessionWatchers.size > 0 || this.hasControl();
    if (wanted && this.sessionSub === undefined) {
      this.sessionSub = this.deps.bus.subscribe(this.deps.subjects.broadcast("session"), (data) =>
        this.onSessionEvent(data),
      );
    } else if (!wanted && this.sessionSub !== undefined) {
      this.sessionSub();
      this.sessionSub = undefined;
    }
  }

  private updateControlSubscription(): void {
    const wanted = this.hasControl();
    if (wanted && this.controlSub === undefined) {
      this.controlSub = this.deps.bus.subscribe(this.deps.subjects.broadcast("control"), (data) =>
        this.onControlEvent(data),
      );
    } else if (!wanted && this.controlSub !== undefined) {
      this.controlSub();
      this.controlSub = undefined;
    }
  }

  private decode(data: Uint8Array, what: string): { event: ClientEvent; family: EventFamily } | undefined {
    try {
      const event = decodeClientEvent(data);
      return { event, family: eventFamily(event.event) };
    } catch (err) {
      this.deps.logger.warn({ err }, `dropped an undecodable ${what} event`);
      return undefined;
    }
  }

  private onSessionEvent(data: Uint8Array): void {
    const decoded = this.decode(data, "session");
    if (decoded === undefined) return;
    const { event, family } = decoded;
    const frame = encodedEventFrame(event.event, receivedJson(event.payloadJson));
    for (const target of this.controls.values()) if (target.accepts(family)) target.sendText(frame);
    for (const id of this.sessionWatchers.get(event.sessionKey) ?? []) {
      const target = this.controls.has(id) ? undefined : this.targets.get(id);
      if (target?.accepts(family)) target.sendText(frame);
    }
  }

  private onControlEvent(data: Uint8Array): void {
    const decoded = this.decode(data, "control");
    if (decoded === undefined) return;
    const frame = encodedEventFrame(decoded.event.event, receivedJson(decoded.event.payloadJson));
    for (const target of this.controls.values()) if (target.accepts(decoded.family)) target.sendText(frame);
  }
}
