import type { Bus, Subjects } from "@gw/bus";
import { type ClientEventName, type ClientEventPayloads, encodeClientEvent, encodeJson, type SessionChanges } from "@gw/contracts";

/**
 * Session events (SPEC §6) go out on the `session` broadcast: every edge holding a control
 * connection or a watcher of the session gets them and fans them out (edge EventHub).
 */
export class SessionEvents {
  constructor(private readonly deps: { bus: Bus; subjects: Subjects }) {}

  created(key: string, agentId: string): void {
    this.publish("session.created", key, { key, agentId });
  }

  updated(key: string, changes: SessionChanges): void {
    this.publish("session.updated", key, { key, changes });
  }

  private publish<E extends ClientEventName>(event: E, sessionKey: string, payload: ClientEventPayloads[E]): void {
    this.deps.bus.publish(
      this.deps.subjects.broadcast("session"),
      encodeClientEvent({ event, payload: encodeJson(payload), sessionKey }),
    );
  }
}
