import { createServer } from "node:net";

// Below Linux's ephemeral range (32768-60999), so an outgoing connection's source port can
// never take a port a test is about to listen on, and spread wide so parallel test processes
// rarely pick the same one.
const LOW = 15_000;
const HIGH = 32_000;
const ATTEMPTS = 200;

// Ports this process has already handed out: the kernel would happily give the same free port
// twice in a row, and two servers of one test would then race for it.
const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen({ host: "127.0.0.1", port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * Finds an unused loopback port that this process has not handed out before. The port is
 * released before it is returned, so another process may still take it; the server starters
 * retry for that.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < ATTEMPTS; i++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free loopback port found in ${LOW}-${HIGH} after ${ATTEMPTS} attempts`);
}
