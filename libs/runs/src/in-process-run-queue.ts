import { currentTrace, type TraceContext } from "@gw/bus";
import { GatewayError, type RunRequest } from "@gw/contracts";
import { admittedSlots, type ConsumeOptions, type RunConsumer, type RunHandler, type RunQueue, runInSlot, type Slots } from "./run-queue.js";

interface Consumer {
  slots: Slots;
  handler: RunHandler;
  stopped: boolean;
}

/** The embedded-mode run queue: FIFO, handed to the consumer with free slots (round robin). */
export class InProcessRunQueue implements RunQueue {
  /** Each queued run with the trace of the request that submitted it. */
  private readonly pending: Array<{ request: RunRequest; trace: TraceContext | undefined }> = [];
  private readonly consumers: Consumer[] = [];
  private cursor = 0;
  private closed = false;

  async submit(request: RunRequest): Promise<void> {
    if (this.closed) throw new GatewayError("UNAVAILABLE", "the run queue is closed");
    this.pending.push({ request, trace: currentTrace() });
    this.pump();
  }

  consume(handler: RunHandler, opts: ConsumeOptions): RunConsumer {
    // Each admission window may raise the limit: hand out what it lets in.
    const { slots, stop: stopAdmission } = admittedSlots(opts, () => this.pump());
    const consumer: Consumer = { slots, handler, stopped: false };
    this.consumers.push(consumer);
    this.pump();
    return {
      active: () => consumer.slots.active,
      admitted: () => consumer.slots.admitted,
      stop: async () => {
        stopAdmission();
        // A second stop() must not splice(-1): that would drop some other consumer.
        if (!consumer.stopped) this.consumers.splice(this.consumers.indexOf(consumer), 1);
        consumer.stopped = true;
        await consumer.slots.drained();
      },
    };
  }

  async depth(): Promise<number> {
    return this.pending.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.pending.length = 0;
  }

  private pump(): void {
    while (this.pending.length > 0) {
      const consumer = this.nextWithRoom();
      if (consumer === undefined) return;
      const { request, trace } = this.pending.shift()!;
      // A freed slot may take the next queued run: pump only once the slot is released
      // (pumping from inside the handler's own finally ran before the release and found no room).
      runInSlot(consumer.slots, consumer.handler, request, { released: () => this.pump(), ...(trace ? { trace } : {}) });
    }
  }

  private nextWithRoom(): Consumer | undefined {
    for (let i = 0; i < this.consumers.length; i++) {
      const consumer = this.consumers[(this.cursor + i) % this.consumers.length]!;
      if (!consumer.stopped && consumer.slots.free > 0) {
        this.cursor = (this.cursor + i + 1) % this.consumers.length;
        return consumer;
      }
    }
    return undefined;
  }
}
