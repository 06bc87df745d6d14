import type { FastifyRequest } from "fastify";
import type { AuthGate, Principal } from "./auth-gate.js";
import { normalizeIp, requestTarget, type TrustedProxies } from "./client-address.js";
import type { IdentityRoles } from "./identity-roles.js";

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** What checks an HTTP request's bearer credential. */
export interface BearerAuthDeps {
  authGate: AuthGate;
  identityRoles: IdentityRoles;
  trustedProxies: TrustedProxies;
}

/** The secret of an `Authorization: Bearer <secret>` header, or undefined. */
export function bearerCredential(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match?.[1]?.trim() || undefined;
}

/**
 * The `onRequest` hook of every authenticated route (SPEC §5 chain, failed-auth limiter). These
 * routes (/v1, /api/send, /api/tools/invoke) are operator surfaces that name any session or
 * channel, so a proxy's or overlay network's user needs control there (IdentityRoles).
 */
export function bearerAuth(deps: BearerAuthDeps) {
  return async (request: FastifyRequest) => {
    const peerIp = normalizeIp(request.socket.remoteAddress);
    const principal = await deps.authGate.authorize(
      {
        peerIp,
        host: requestTarget(request.raw.url, request.headers).host,
        headers: request.headers,
        credential: bearerCredential(request.headers.authorization),
      },
      deps.trustedProxies.clientIp(request.socket.remoteAddress, request.headers),
    );
    deps.identityRoles.assertOperator(principal);
    request.principal = principal;
  };
}
