import type { Bus, Subjects } from "@gw/bus";
import { type ClientEventName, type ClientEventPayloads, encodeClientEvent, encodeJson } from "@gw/contracts";

/**
 * Events only control connections receive (pairing requests and their outcomes, device changes),
 * on the `control` broadcast: whichever edge caused one publishes it once, and every edge that
 * holds a control connection hands it to them (EventHub).
 */
export class ControlEvents {
  constructor(private readonly deps: { bus: Bus; subjects: Subjects }) {}

  publish<E extends ClientEventName>(event: E, payload: ClientEventPayloads[E]): void {
    this.deps.bus.publish(this.deps.subjects.broadcast("control"), encodeClientEvent({ event, payload: encodeJson(payload) }));
  }
}
