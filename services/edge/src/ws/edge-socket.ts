import { type RawData, WebSocket } from "ws";

/** What a socket hands its frames, close and errors to (the Connection). */
export interface SocketOwner {
  receive(frame: Buffer): unknown;
  closed(): void;
  socketError(err: Error): void;
}

/**
 * The edge's WebSocket class (ws's `WebSocket` server option): it carries its Connection, so
 * one set of shared listener functions serves every socket instead of three closures each.
 */
export class EdgeSocket extends WebSocket {
  connection?: SocketOwner;
}

export function onSocketMessage(this: EdgeSocket, data: RawData): void {
  void this.connection?.receive(toBuffer(data));
}

export function onSocketClose(this: EdgeSocket): void {
  this.connection?.closed();
}

export function onSocketError(this: EdgeSocket, err: Error): void {
  this.connection?.socketError(err);
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

