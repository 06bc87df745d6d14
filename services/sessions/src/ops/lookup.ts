import { GatewayError } from "@gw/contracts";
import type { SessionsDeps } from "./deps.js";
import { newSessionMeta, type SessionMeta } from "../model.js";
import { checkKey } from "../validate.js";

export const notFound = (key: string) => new GatewayError("NOT_FOUND", `unknown session: ${key}`);

/** The session under `key`, created on first use; only the creating call publishes session.created. */
export async function ensureSession(
  deps: SessionsDeps,
  key: string,
  agentId: string,
): Promise<{ meta: SessionMeta; created: boolean }> {
  const existing = await deps.repo.getMeta(key);
  if (existing) return { meta: existing, created: false };
  const id = deps.agents.resolve(agentId);
  const now = deps.now();
  const result = await deps.repo.createMeta(newSessionMeta(key, id, deps.agents.modelOf(id), now));
  if (result.created) deps.events.created(key, id);
  return result;
}

export async function requireSession(deps: SessionsDeps, key: string): Promise<SessionMeta> {
  const meta = await deps.repo.getMeta(checkKey(key));
  if (!meta) throw notFound(key);
  return meta;
}
