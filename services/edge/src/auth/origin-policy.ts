import { GatewayError } from "@gw/contracts";
import type { HeaderBag } from "./client-address.js";

function firstHeader(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Which browser pages may talk to the gateway (DESIGN §10). A request without `Origin` did not
 * come from a page and is not this policy's business. One with `Origin` is let through only
 * from `gateway.allowedOrigins` or from the edge's own page (the Origin's host:port is the one
 * the request was sent to); it still needs a credential, since a page is never trusted as
 * loopback (`isLocalDirect`).
 */
export class OriginPolicy {
  private readonly allowed: ReadonlySet<string>;

  constructor(allowedOrigins: readonly string[]) {
    this.allowed = new Set(allowedOrigins);
  }

  /**
   * Throws FORBIDDEN for an Origin that is neither listed nor the edge's own.
   * `authority` is the raw Host (or absolute-form target authority) the request was sent to.
   */
  check(headers: HeaderBag, authority: string | undefined): void {
    const origin = firstHeader(headers, "origin");
    if (origin === undefined) return;
    if (this.allows(origin.trim(), authority?.trim().toLowerCase())) return;
    throw new GatewayError(
      "FORBIDDEN",
      `origin ${JSON.stringify(origin.slice(0, 200))} is not allowed; list it in gateway.allowedOrigins`,
    );
  }

  private allows(origin: string, authority: string | undefined): boolean {
    // Sandboxed frames, file: pages and redirects send "null": never a page we can name.
    if (origin === "null" || origin === "") return false;
    if (this.allowed.has(origin)) return true;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return false;
    if (this.allowed.has(url.origin)) return true;
    return authority !== undefined && url.host === authority;
  }
}
