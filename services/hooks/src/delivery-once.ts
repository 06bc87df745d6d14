import { createHash } from "node:crypto";
import { GatewayError, HookAccepted } from "@gw/contracts";
import { type FastStore, RunOnce } from "@gw/store";

export interface DeliveryOnceOptions {
  /** How long a delivery id is remembered (hooks.idempotencyWindowSeconds). */
  windowMs: number;
  /** How long the claim of a holder that died blocks the id; a live holder extends it. */
  claimTtlMs: number;
  /** How long a repeat waits for the first delivery still being accepted. */
  waitMs: number;
}

const digest = (text: string) => createHash("sha256").update(text).digest("base64url");

/**
 * A webhook delivered again (senders retry, GitHub redelivers) with the same id runs once,
 * across every replica (RunOnce on the FastStore): the first delivery is accepted; a repeat
 * within the window gets the first answer with `duplicate: true` and starts nothing; a repeat
 * while the first is still being accepted waits for it. The same id with another body is a
 * CONFLICT. A failed acceptance is forgotten, body and all, so a retry runs, corrected or not.
 */
export class DeliveryOnce {
  private readonly once: RunOnce<HookAccepted>;

  constructor(
    store: FastStore,
    private readonly opts: DeliveryOnceOptions,
  ) {
    this.once = new RunOnce<HookAccepted>(store, {
      windowMs: opts.windowMs,
      claimTtlMs: opts.claimTtlMs,
      codec: {
        encode: (accepted) => Buffer.from(HookAccepted.encode(accepted).finish()).toString("base64"),
        decode: (text) => HookAccepted.decode(Buffer.from(text, "base64")),
      },
      stillRunning: () => new GatewayError("CONFLICT", "a delivery with this id is still being accepted; retry shortly"),
      conflict: () => new GatewayError("CONFLICT", "this delivery id was already used for a different request"),
      // A refused delivery started nothing: the sender may correct the body and retry it under the same id.
      forgetFailedRequest: true,
    });
  }

  /**
   * `scope` keeps endpoints apart (a wake id never answers an agent hook); `body` is what must
   * match for a repeat to count as the same delivery.
   */
  async run(scope: string, id: string, body: string, accept: () => Promise<HookAccepted>): Promise<HookAccepted> {
    const key = `hooks:delivery:${digest(`${scope}\n${id}`)}`;
    const { value, cached } = await this.once.run(key, digest(body), Date.now() + this.opts.waitMs, accept);
    return cached ? { ...value, duplicate: true } : value;
  }
}
