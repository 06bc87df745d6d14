import { GatewayError, readStoredJson } from "@gw/contracts";
import type { DurableKv } from "@gw/store";
import { z } from "zod";

/** A stored response: the session that holds its conversation, and the object answered. */
const StoredResponseSchema = z.object({
  sessionKey: z.string(),
  agentId: z.string(),
  response: z.record(z.string(), z.unknown()),
});
export type StoredResponse = z.infer<typeof StoredResponseSchema>;

const RESPONSE_ID = /^resp_[0-9a-f]{32}$/;
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const latestKey = (sessionKey: string) => `latest:${sessionKey}`;

function notFound(id: string, param?: string): GatewayError {
  return new GatewayError("NOT_FOUND", `no stored response ${id}`, param ? { details: { param } } : undefined);
}

/**
 * Responses kept with `store: true` (docs/decisions.md, "Stored responses"): the durable store
 * maps a response id to the session its conversation lives in, and each such session to its
 * latest response, the only one that may be continued. Durable, so it holds across restarts and
 * edges like the sessions themselves.
 */
export class StoredResponses {
  constructor(private readonly kv: DurableKv) {}

  /**
   * The stored response, or NOT_FOUND (naming `param` when given). One that does not decode is
   * INTERNAL, with what is wrong as the cause (logged by the HTTP error mapper); it can be deleted.
   */
  async get(id: string, param?: string): Promise<StoredResponse> {
    if (!RESPONSE_ID.test(id)) throw notFound(id, param);
    const entry = await this.kv.get(id);
    if (entry === null) throw notFound(id, param);
    const stored = readStoredJson(entry.value, StoredResponseSchema);
    if (!stored.ok) throw new GatewayError("INTERNAL", `stored response ${id} is corrupt`, { cause: new Error(stored.problem) });
    return stored.value;
  }

  /** The latest response of the conversation in `sessionKey`, if one is stored. */
  async latest(sessionKey: string): Promise<string | undefined> {
    const entry = await this.kv.get(latestKey(sessionKey));
    return entry === null ? undefined : new TextDecoder().decode(entry.value);
  }

  async save(id: string, stored: StoredResponse): Promise<void> {
    await this.kv.put(id, encode(stored));
    await this.kv.put(latestKey(stored.sessionKey), new TextEncoder().encode(id));
  }

  /** Forgets the response (its session stays, with the conversation); NOT_FOUND if unknown. */
  async delete(id: string): Promise<void> {
    if (!RESPONSE_ID.test(id) || (await this.kv.get(id)) === null) throw notFound(id);
    await this.kv.delete(id);
  }
}
