import type { ConnectAnswer, GatewayClient } from "@gw/client";
import type { ControlView } from "./control.js";
import { refreshWhileShown } from "./view.js";

/**
 * A control view the gateway sends no event about: read when the link comes up, and again every
 * `everyMs` while its tab is open (refreshWhileShown). A subclass says how it is read.
 */
export abstract class PolledView implements ControlView {
  protected client: GatewayClient | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    protected readonly root: HTMLElement,
    private readonly everyMs: number,
  ) {}

  async up(client: GatewayClient, _hello: ConnectAnswer): Promise<void> {
    this.client = client;
    await this.load();
  }

  down(): void {
    this.client = undefined;
  }

  event(): void {
    // No event of its own: shown() reads it again while the tab is open.
  }

  shown(): void {
    clearInterval(this.timer);
    this.timer = refreshWhileShown(this.root, () => this.load(), this.everyMs);
  }

  protected abstract load(): Promise<void>;
}
