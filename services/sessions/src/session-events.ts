import { type Bus, encodeClientEvent, type Subjects } from "@gw/bus";

/**
 * Session events (SPEC §6) go out on the `session` broadcast: every edge holding a control
 * connection or a watcher of the session gets them and fans them out (edge EventHub).
 */
export class SessionEvents {
  constructor(private readonly deps: { bus: Bus; subjects: Subjects }) {}

  created(key: string, agentId: string): void {
    this.publish("session.created", key, { key, agentId });
  }

  updated(key: string, changes: Record<string, unknown>): void {
    this.publish("session.updated", key, { key, changes });
  }

  private publish(event: string, sessionKey: string, payload: Record<string, unknown>): void {
    this.deps.bus.publish(
      this.deps.subjects.broadcast("session"),
      encodeClientEvent({ event, payload, sessionKey }),
    );
  }
}
