import { connect } from "node:net";

const PROBE_TIMEOUT_MS = 1_000;

/** Sends `request` (if any) to 127.0.0.1:port and resolves with the first bytes received. */
function exchange(port: number, request: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.setTimeout(PROBE_TIMEOUT_MS);
    let received = "";
    socket.once("connect", () => {
      if (request === undefined) {
        socket.destroy();
        resolve("");
      } else {
        socket.write(request);
      }
    });
    socket.on("data", (chunk) => {
      received += chunk.toString();
      if (received.includes("\r\n")) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.once("timeout", () => {
      socket.destroy();
      reject(new Error(`no answer on port ${port} within ${PROBE_TIMEOUT_MS} ms`));
    });
    socket.once("error", reject);
    socket.once("close", () => reject(new Error(`port ${port} closed the connection`)));
  });
}

export async function tcpAccepts(port: number): Promise<boolean> {
  await exchange(port, undefined);
  return true;
}

/** Redis answers PING with +PONG once it can serve commands (not while loading). */
export async function redisReady(port: number): Promise<boolean> {
  const reply = await exchange(port, "PING\r\n");
  if (!reply.startsWith("+PONG")) throw new Error(`redis answered PING with ${JSON.stringify(reply.trim())}`);
  return true;
}

/**
 * nats-server's /healthz reports ok only once JetStream (when enabled) has recovered its
 * streams, which is what a restart test needs before it reads data back.
 */
export async function natsReady(port: number, monitorPort: number): Promise<boolean> {
  await tcpAccepts(port);
  const res = await fetch(`http://127.0.0.1:${monitorPort}/healthz`, {
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
  });
  const body = await res.text();
  if (!res.ok) throw new Error(`nats-server /healthz answered ${res.status}: ${body.trim()}`);
  return true;
}
