import type { Bus, Subjects } from "@gw/bus";
import type { InboundMessage } from "@gw/channels";
import type { QueueSettings } from "@gw/config";
import type { Logger } from "@gw/runtime";
import { requestRunAbort, type RunRegistry } from "@gw/runs";
import type { InboundStore } from "../store/inbound-store.js";
import { inboxEntryOf, markInterrupt, markSteer, untouched } from "./pending-queue.js";
import type { InboundOrigin } from "../store/sink.js";

export interface QueueArrivalsDeps {
  store: InboundStore;
  registry: RunRegistry;
  bus: Bus;
  subjects: Subjects;
  /** The queue settings of an account's message (InboundTurn.queueOf). */
  queueOf: (origin: InboundOrigin, msg: InboundMessage) => QueueSettings;
  logger: Logger;
}

/**
 * What a message stored while its session's turn runs does to that turn (issue 26 §1), done by
 * the replica that stored it, whichever replica runs the turn: under `steer` it is tagged with
 * the run and handed to the run's inbox, which the runner reads before its next model call;
 * under `interrupt` the record names the run as interrupted and the run is aborted, and the turn's
 * worker then starts one new turn with everything waiting. Under `followup` and `collect` nothing
 * happens here: the worker takes the message up when the turn is over. Both changes are
 * compare-and-set on the session's record, so they never race the worker's own bookkeeping
 * (pending-queue.ts) into a lost or doubled message; a step that fails leaves the message to be
 * collected by the next turn.
 */
export class QueueArrivals {
  constructor(private readonly deps: QueueArrivalsDeps) {}

  /**
   * `latest`, a message just stored for the session (its mode is the session's: a route is per
   * chat and thread), spares followup and collect sessions a read. Never rejects: the message is
   * stored already, and a failure here only makes it wait for the next turn.
   */
  async arrived(key: string, origin: InboundOrigin, latest: InboundMessage): Promise<void> {
    const { mode } = this.deps.queueOf(origin, latest);
    if (mode !== "steer" && mode !== "interrupt") return;
    try {
      const read = await this.deps.store.read(key);
      const runId = read?.queue.items[0]?.turn;
      if (read === null || runId === undefined || untouched(read.queue).length === 0) return;
      if (mode === "steer") await this.steer(key, runId);
      else if (mode === "interrupt") await this.interrupt(key, runId);
    } catch (err) {
      this.deps.logger.warn({ err, key }, "cannot hand a new message to its session's running turn; the next turn takes it");
    }
  }

  private async steer(key: string, runId: string): Promise<void> {
    const written = await this.deps.store.change(key, (queue) => markSteer(queue, runId));
    if (written === undefined) return;
    const handed = written.items.filter((item) => item.steer === runId);
    await this.deps.registry.inbox.offer(runId, handed.map((item) => inboxEntryOf(item, "steer")));
  }

  private async interrupt(key: string, runId: string): Promise<void> {
    const written = await this.deps.store.change(key, (queue) => markInterrupt(queue, runId));
    if (written !== undefined) await requestRunAbort(this.deps, runId);
  }
}
