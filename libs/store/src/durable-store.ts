/**
 * The port for state that must survive restarts (sessions, paired devices). JetStream KV backs
 * it in distributed mode, files in embedded mode; both pass durable-kv.contract.ts.
 */

export interface KvEntry {
  value: Uint8Array;
  /** Changes on every write; pass it to update() for compare-and-set. */
  revision: number;
}

export interface DurableKv {
  get(key: string): Promise<KvEntry | null>;
  /** Unconditional write; returns the new revision. */
  put(key: string, value: Uint8Array): Promise<number>;
  /** Writes only if the key does not exist, else throws GatewayError("CONFLICT"). */
  create(key: string, value: Uint8Array): Promise<number>;
  /** Writes only if the key is at `expectedRevision`, else throws GatewayError("CONFLICT"). */
  update(key: string, value: Uint8Array, expectedRevision: number): Promise<number>;
  /**
   * Removes the key. With `expectedRevision`, only while the key is at that revision (else
   * GatewayError("CONFLICT"), also when it is gone), so a reader that saw a value can remove
   * exactly that value and never one written after it.
   */
  delete(key: string, expectedRevision?: number): Promise<void>;
  keys(): Promise<string[]>;
}

export interface DurableStore {
  /** Opens (creating if needed) a bucket. Names: letters, digits, `-` and `_`. */
  kv(bucket: string): Promise<DurableKv>;
  isHealthy(): boolean;
  close(): Promise<void>;
}
