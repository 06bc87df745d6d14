import { createHash } from "node:crypto";
import { GatewayError, HookAccepted } from "@gw/contracts";
import type { FastStore } from "@gw/store";

export interface DeliveryOnceOptions {
  /** How long a delivery id is remembered (hooks.idempotencyWindowSeconds). */
  windowMs: number;
  /** How long the claim of a holder that died blocks the id; a live holder extends it. */
  claimTtlMs: number;
  /** How long a repeat waits for the first delivery still being accepted. */
  waitMs: number;
}

const digest = (text: string) => createHash("sha256").update(text).digest("base64url");

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A webhook delivered again (senders retry, GitHub redelivers) with the same id runs once,
 * across every replica, on the FastStore's idempotency claims: the first delivery claims the id
 * and is accepted; a repeat within the window gets the first answer with `duplicate: true` and
 * starts nothing; a repeat while the first is still being accepted waits for it. The same id
 * with another body is a CONFLICT. A failed acceptance is forgotten, so a retry runs.
 */
export class DeliveryOnce {
  constructor(
    private readonly store: FastStore,
    private readonly opts: DeliveryOnceOptions,
  ) {}

  /**
   * `scope` keeps endpoints apart (a wake id never answers an agent hook); `body` is what must
   * match for a repeat to count as the same delivery.
   */
  async run(scope: string, id: string, body: string, accept: () => Promise<HookAccepted>): Promise<HookAccepted> {
    const key = `hooks:delivery:${digest(`${scope}\n${id}`)}`;
    await this.checkSameBody(key, digest(body));
    const deadline = Date.now() + this.opts.waitMs;
    for (let wait = 25; ; wait = Math.min(wait * 2, 250)) {
      const state = await this.store.idempotency.begin(key, this.opts.claimTtlMs);
      if (state.status === "done") {
        return { ...HookAccepted.decode(Buffer.from(state.result, "base64")), duplicate: true };
      }
      if (state.status === "new") return this.acceptClaimed(key, accept);
      if (Date.now() + wait > deadline) {
        throw new GatewayError("CONFLICT", "a delivery with this id is still being accepted; retry shortly");
      }
      await sleep(wait);
    }
  }

  private async acceptClaimed(key: string, accept: () => Promise<HookAccepted>): Promise<HookAccepted> {
    const extend = setInterval(() => {
      void this.store.idempotency.extend(key, this.opts.claimTtlMs).catch(() => undefined);
    }, this.opts.claimTtlMs / 3);
    let accepted: HookAccepted;
    try {
      accepted = await accept();
    } catch (err) {
      await this.store.idempotency.abandon(key).catch(() => undefined);
      throw err;
    } finally {
      clearInterval(extend);
    }
    const result = Buffer.from(HookAccepted.encode(accepted).finish()).toString("base64");
    await this.store.idempotency.complete(key, result, this.opts.windowMs);
    return accepted;
  }

  private async checkSameBody(key: string, print: string): Promise<void> {
    const printKey = `${key}:body`;
    if (await this.store.values.set(printKey, print, { ttlMs: this.opts.windowMs, ifAbsent: true })) return;
    const first = await this.store.values.get(printKey);
    if (first !== null && first !== print) {
      throw new GatewayError("CONFLICT", "this delivery id was already used for a different request");
    }
  }
}
