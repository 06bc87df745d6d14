import { type GatewayError } from "@gw/contracts";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { headers } from "@nats-io/nats-core";
import { checkKey, checkRevision, conflict } from "./durable-args.js";
import type { DurableKv, KvEntry } from "./durable-store.js";
import { isSequenceConflict, jetStreamError } from "./jetstream-errors.js";
import { kvSubject, publishExpecting } from "./jetstream-fence.js";
import { decodeNatsKey, encodeNatsKey } from "./key-codec.js";

function storeError(err: unknown, what: string): GatewayError {
  return jetStreamError(err, `jetstream kv ${what}`);
}

/** A DurableKv over one JetStream KV bucket (history 1, file storage). */
export class JetStreamKv implements DurableKv {
  constructor(
    private readonly kv: KV,
    /** The bucket's full name and a client on its connection, for compare-and-set writes. */
    private readonly bucket: { name: string; js: JetStreamClient },
    private readonly isOpen: () => void,
  ) {}

  async get(key: string): Promise<KvEntry | null> {
    const subjectKey = this.encode(key);
    try {
      const entry = await this.kv.get(subjectKey);
      // A delete leaves a DEL/PURGE marker as the latest entry; to callers the key is gone.
      if (entry === null || entry.operation !== "PUT") return null;
      // Hand out a plain Uint8Array (not a Buffer view into a pooled chunk), as the file store does.
      return { value: new Uint8Array(entry.value), revision: entry.revision };
    } catch (err) {
      throw storeError(err, "get");
    }
  }

  async put(key: string, value: Uint8Array): Promise<number> {
    const subjectKey = this.encode(key);
    try {
      return await this.kv.put(subjectKey, value);
    } catch (err) {
      throw storeError(err, "put");
    }
  }

  async create(key: string, value: Uint8Array): Promise<number> {
    const subjectKey = this.encode(key);
    try {
      return await this.kv.create(subjectKey, value);
    } catch (err) {
      if (isSequenceConflict(err)) throw conflict(`key already exists: ${key}`, err);
      throw storeError(err, "create");
    }
  }

  async update(key: string, value: Uint8Array, expectedRevision: number): Promise<number> {
    const subjectKey = this.encode(key);
    checkRevision(expectedRevision);
    try {
      this.isOpen();
      return await publishExpecting(this.bucket.js, kvSubject(this.bucket.name, subjectKey), value, expectedRevision);
    } catch (err) {
      if (isSequenceConflict(err))
        throw conflict(`revision mismatch for ${key}: expected ${expectedRevision}`, err);
      throw storeError(err, "update");
    }
  }

  async delete(key: string, expectedRevision?: number): Promise<void> {
    const subjectKey = this.encode(key);
    if (expectedRevision !== undefined) checkRevision(expectedRevision);
    try {
      if (expectedRevision === undefined) {
        await this.kv.delete(subjectKey);
      } else {
        this.isOpen();
        const marker = headers();
        marker.set("KV-Operation", "DEL");
        const subject = kvSubject(this.bucket.name, subjectKey);
        await publishExpecting(this.bucket.js, subject, new Uint8Array(0), expectedRevision, marker);
      }
    } catch (err) {
      if (isSequenceConflict(err)) throw conflict(`revision mismatch for ${key}: expected ${expectedRevision}`, err);
      throw storeError(err, "delete");
    }
  }

  async keys(): Promise<string[]> {
    this.isOpen();
    const keys: string[] = [];
    try {
      for await (const subjectKey of await this.kv.keys()) {
        const key = decodeNatsKey(subjectKey);
        if (key !== undefined) keys.push(key);
      }
    } catch (err) {
      throw storeError(err, "keys");
    }
    return keys.sort();
  }

  private encode(key: string): string {
    this.isOpen();
    return encodeNatsKey(checkKey(key));
  }
}
