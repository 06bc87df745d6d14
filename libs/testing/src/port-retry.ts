import { freePort } from "./free-port.js";
import { StartupError } from "./server-lifecycle.js";

const ATTEMPTS = 3;

function lostPortRace(err: unknown): boolean {
  return err instanceof StartupError && /address already in use/i.test(err.output);
}

/**
 * freePort() releases the port before the server binds it, so another process can take it in
 * between; picking fresh ports and trying again makes that race harmless.
 */
export async function withFreePorts<T>(count: number, attempt: (ports: number[]) => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    const ports: number[] = [];
    while (ports.length < count) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    try {
      return await attempt(ports);
    } catch (err) {
      if (i >= ATTEMPTS || !lostPortRace(err)) throw err;
    }
  }
}
