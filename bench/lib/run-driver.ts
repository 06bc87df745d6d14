import type WebSocket from "ws";
import { connectSocket } from "./gateway.js";
import { openSocket } from "./ws-load.js";

/**
 * Starts `agent` runs over one connection and resolves each when its answer (the run's final
 * response) arrives; one message handler per socket, so many runs cost one parse per frame.
 */
export class RunDriver {
  private nextId = 1;
  private readonly pending = new Map<number, (ok: boolean) => void>();

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const text = String(data);
      // Events carry no id; only answers are parsed.
      if (!text.startsWith('{"id"')) return;
      const answer = JSON.parse(text) as { id?: number; ok?: boolean };
      const resolve = answer.id === undefined ? undefined : this.pending.get(answer.id);
      if (resolve === undefined) return;
      this.pending.delete(answer.id!);
      resolve(answer.ok === true);
    });
  }

  static async open(url: string, role = "node"): Promise<RunDriver> {
    const socket = await openSocket(url);
    await connectSocket(socket, role);
    return new RunDriver(socket);
  }

  /** Resolves true when the run answered ok, false on an error answer or after 60 s. */
  run(params: Record<string, unknown>): Promise<boolean> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(false);
      }, 60_000);
      this.pending.set(id, (ok) => {
        clearTimeout(timer);
        resolve(ok);
      });
      this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method: "agent", params }));
    });
  }

  close(): void {
    this.socket.terminate();
  }
}
