import type { Bus, Subjects, Unsubscribe } from "@gw/bus";
import {
  DeviceCredentialChange,
  encodeMessage,
  PairDelivery,
  PairResolution,
  type PairResultPayload,
} from "@gw/contracts";
import type { Logger } from "@gw/runtime";

/** What the links need of a socket a device authenticated with its token. */
export interface DeviceSocket {
  readonly id: string;
  close(code: number, reason: string): void;
}

/** Receives the outcome of this socket's pairing request. */
export type PairingWaiter = (result: PairResultPayload) => void;

/** WebSocket close code for a socket whose device token stopped being valid. */
export const CREDENTIAL_CHANGED_CLOSE = 4001;

/**
 * How long an edge remembers a credential change it heard: a `connect` that read the device's
 * record just before a change was written and registers just after its broadcast passed would
 * miss the broadcast, so registering against a remembered change asks for a second read. A store
 * read and a registration take milliseconds; two minutes is ample.
 */
const RECENT_MS = 120_000;
const RECENT_MAX = 100_000;
const DELIVERY_TIMEOUT_MS = 5_000;

interface Linked {
  socket: DeviceSocket;
  tokenId: string;
}

/**
 * This edge's side of paired devices. It knows which of its sockets authenticated as which
 * device with which token, and closes them when the `device` broadcast says that token is no
 * longer valid (rotated or revoked on any edge). It also holds the sockets waiting for a pairing
 * result, and answers the approving edge's request to hand a result to one of them.
 */
export class DeviceLinks {
  private readonly byDevice = new Map<string, Map<string, Linked>>();
  /** device id -> the token id valid after the latest change this edge heard, and when. */
  private readonly recent = new Map<string, { tokenId: string; at: number }>();
  private readonly waiters = new Map<string, PairingWaiter>();
  private readonly unsubscribe: Unsubscribe[];

  constructor(private readonly deps: { bus: Bus; subjects: Subjects; edgeId: string; logger: Logger }) {
    const { bus, subjects } = deps;
    this.unsubscribe = [
      bus.subscribe(subjects.broadcast("device"), (data) => this.onChange(data)),
      bus.handle(subjects.edgeRpc(deps.edgeId, "pair.resolve"), (data) => this.onResolution(data)),
    ];
  }

  /**
   * Registers a device socket, so every later change of the device's credential reaches it.
   * Returns false when this edge heard a change naming another token than the one the socket
   * authenticated with: the caller must read the device's record again (the socket is
   * registered by then, so nothing can slip between) and detach it if the token is stale.
   */
  attach(socket: DeviceSocket, deviceId: string, tokenId: string): boolean {
    let sockets = this.byDevice.get(deviceId);
    if (sockets === undefined) this.byDevice.set(deviceId, (sockets = new Map()));
    sockets.set(socket.id, { socket, tokenId });
    const latest = this.recent.get(deviceId);
    return latest === undefined || latest.tokenId === tokenId;
  }

  detach(socketId: string, deviceId: string): void {
    const sockets = this.byDevice.get(deviceId);
    sockets?.delete(socketId);
    if (sockets?.size === 0) this.byDevice.delete(deviceId);
  }

  /** The socket now holds the device's new token (it asked for the rotation itself). */
  rebind(socketId: string, deviceId: string, tokenId: string): void {
    const linked = this.byDevice.get(deviceId)?.get(socketId);
    if (linked !== undefined) linked.tokenId = tokenId;
  }

  /**
   * Tells every edge (this one too, through the bus) that only `tokenId` is valid for the device
   * now (`""`: none, it was revoked), and waits until the bus has the message.
   */
  async announce(deviceId: string, tokenId: string): Promise<void> {
    this.remember(deviceId, tokenId);
    this.closeStale(deviceId, tokenId);
    this.deps.bus.publish(this.deps.subjects.broadcast("device"), encodeMessage(DeviceCredentialChange, { deviceId, tokenId }));
    await this.deps.bus.flush();
  }

  /** The socket `socketId` waits for its pairing result; returns the way to stop waiting. */
  awaitResult(socketId: string, waiter: PairingWaiter): () => void {
    this.waiters.set(socketId, waiter);
    return () => {
      if (this.waiters.get(socketId) === waiter) this.waiters.delete(socketId);
    };
  }

  /**
   * Hands a pairing result to the socket that asked, on whichever edge holds it. True when the
   * socket was there and was sent it; false when it is gone, or its edge could not be asked (a
   * timeout too: the caller then undoes the pairing, so a token that may have arrived late
   * simply does not work, which is the safe way to be wrong).
   */
  async deliver(edgeId: string, resolution: PairResolution): Promise<boolean> {
    try {
      const reply = await this.deps.bus.request(
        this.deps.subjects.edgeRpc(edgeId, "pair.resolve"),
        encodeMessage(PairResolution, resolution),
        { timeoutMs: DELIVERY_TIMEOUT_MS },
      );
      return PairDelivery.decode(reply).delivered;
    } catch (err) {
      this.deps.logger.warn({ err, edgeId, requestId: resolution.requestId }, "could not reach the edge of a pairing request");
      return false;
    }
  }

  close(): void {
    for (const stop of this.unsubscribe) stop();
    this.waiters.clear();
  }

  private onResolution(data: Uint8Array): Uint8Array {
    const resolution = PairResolution.decode(data);
    const waiter = this.waiters.get(resolution.connId);
    if (waiter === undefined) return encodeMessage(PairDelivery, { delivered: false });
    this.waiters.delete(resolution.connId);
    const status = resolution.status === "approved" ? "approved" : "rejected";
    waiter({
      requestId: resolution.requestId,
      deviceId: resolution.deviceId,
      status,
      ...(status === "approved" ? { token: resolution.token } : {}),
    });
    return encodeMessage(PairDelivery, { delivered: true });
  }

  private onChange(data: Uint8Array): void {
    let change: DeviceCredentialChange;
    try {
      change = DeviceCredentialChange.decode(data);
    } catch (err) {
      this.deps.logger.warn({ err }, "dropped an undecodable device broadcast");
      return;
    }
    this.remember(change.deviceId, change.tokenId);
    this.closeStale(change.deviceId, change.tokenId);
  }

  private closeStale(deviceId: string, validTokenId: string): void {
    const sockets = this.byDevice.get(deviceId);
    if (sockets === undefined) return;
    const reason = validTokenId === "" ? "device revoked" : "device token rotated";
    for (const linked of [...sockets.values()]) {
      if (linked.tokenId === validTokenId) continue;
      this.detach(linked.socket.id, deviceId);
      linked.socket.close(CREDENTIAL_CHANGED_CLOSE, reason);
    }
  }

  private remember(deviceId: string, tokenId: string): void {
    const now = Date.now();
    this.recent.delete(deviceId);
    this.recent.set(deviceId, { tokenId, at: now });
    // Oldest first (insertion order): drop what has aged out, and the oldest past the cap.
    for (const [id, entry] of this.recent) {
      if (entry.at > now - RECENT_MS && this.recent.size <= RECENT_MAX) break;
      this.recent.delete(id);
    }
  }
}
