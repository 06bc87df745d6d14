/**
 * One WebSocket connection of the page in one role, kept up: it connects with the page's secret,
 * tells its owner when it is up or down, and reconnects with backoff after a drop (an edge that
 * died or drained). A refused credential or role ends the attempts: the owner decides.
 */
import { type ConnectAnswer, GatewayClient, GatewayRpcError, type Role } from "@gw/client";

const MAX_BACKOFF_MS = 10_000;
const REFUSALS = new Set(["UNAUTHORIZED", "RATE_LIMITED", "FORBIDDEN"]);

export interface LinkOwner {
  up(client: GatewayClient, hello: ConnectAnswer): Promise<void>;
  down(retryInMs: number): void;
  refused(err: GatewayRpcError): void;
  event(name: string, payload: Record<string, unknown>): void;
}

export function socketUrl(): string {
  const url = new URL("ws", location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

export class Link {
  client: GatewayClient | undefined;
  private backoffMs = 500;

  constructor(
    private readonly role: Role,
    private readonly secret: () => string | undefined,
    private readonly owner: LinkOwner,
  ) {}

  /** Connects; resolves once connected, refused, or a retry is scheduled. */
  async open(): Promise<void> {
    let socket: GatewayClient;
    try {
      socket = await GatewayClient.open(socketUrl(), (url) => new WebSocket(url));
    } catch {
      return this.retryLater();
    }
    const secret = this.secret();
    let hello: ConnectAnswer;
    try {
      hello = await socket.request("connect", {
        role: this.role,
        client: { name: "webchat", version: "1" },
        ...(secret === undefined ? {} : { auth: { token: secret } }),
      });
    } catch (err) {
      socket.close();
      if (err instanceof GatewayRpcError && REFUSALS.has(err.code)) return this.owner.refused(err);
      return this.retryLater();
    }
    this.client = socket;
    this.backoffMs = 500;
    socket.onEvent((name, payload) => this.owner.event(name, payload));
    socket.onClose(() => {
      if (this.client === socket) this.client = undefined;
      this.retryLater();
    });
    try {
      await this.owner.up(socket, hello);
    } catch {
      // The socket dropped while the owner loaded; onClose has scheduled the reconnect.
      if (socket.isOpen) socket.close();
    }
  }

  private retryLater(): void {
    const wait = this.backoffMs;
    this.owner.down(wait);
    setTimeout(() => void this.open().catch(() => this.retryLater()), wait);
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
  }
}
