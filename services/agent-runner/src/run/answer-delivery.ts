import { type Bus, callRpc, type Subjects } from "@gw/bus";
import { RPC, type RunRequest } from "@gw/contracts";

export interface AnswerDeliveryDeps {
  bus: Bus;
  subjects: Subjects;
  timeoutMs: number;
}

function message(req: RunRequest, text: string) {
  return {
    channel: req.messageChannel,
    // "": the person of a channel's session key (send's `to`).
    to: req.to ?? "",
    text,
    mediaUrls: [],
    gifPlayback: false,
    sessionKey: req.sessionKey,
    // One delivery per run, however often its outcome is retried.
    idempotencyKey: `run:${req.runId}`,
  };
}

/**
 * `deliver: true` (SPEC §4.1 `agent`): the answer goes to `messageChannel`/`to` (or the person
 * of a channel's session key) through delivery's durable outbox. Checked before the model is
 * called, so a run that cannot be delivered (unknown channel, bad recipient) fails at once
 * instead of after spending a model call.
 */
export class AnswerDelivery {
  constructor(private readonly deps: AnswerDeliveryDeps) {}

  async check(req: RunRequest): Promise<void> {
    await callRpc(
      this.deps.bus,
      this.deps.subjects,
      RPC.deliveryEnqueue,
      { message: message(req, "check"), origin: `run:${req.runId}`, validateOnly: true },
      { timeoutMs: this.deps.timeoutMs },
    );
  }

  /** Resolves once delivery has the answer durably; sending happens after, with retries. */
  async enqueue(req: RunRequest, text: string): Promise<string> {
    const res = await callRpc(
      this.deps.bus,
      this.deps.subjects,
      RPC.deliveryEnqueue,
      { message: message(req, text), origin: `run:${req.runId}`, validateOnly: false },
      { timeoutMs: this.deps.timeoutMs },
    );
    return res.jobId;
  }
}
