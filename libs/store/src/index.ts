export { fsyncDir, writeFileAtomic } from "./atomic-write.js";
export type { DurableKv, DurableStore, KvEntry } from "./durable-store.js";
export type {
  CounterStore,
  FastStore,
  IdempotencyStore,
  IdemState,
  LeaseStore,
  SetStore,
  ValueSetOptions,
  ValueStore,
  WindowCount,
} from "./fast-store.js";
export { createFileDurableStore } from "./file-durable-store.js";
export {
  createJetStreamDurableStore,
  type JetStreamDurableStore,
  type JetStreamDurableStoreOptions,
  readsDirect,
} from "./jetstream-durable-store.js";
export { HeldLease, type LeaseOutcome, type LeaseTiming, leaseTiming, withLease } from "./held-lease.js";
export { KeyedMutex } from "./keyed-mutex.js";
export { fingerprint, type Once, RunOnce, type RunOnceCodec, type RunOnceOptions, type RunOnceSettings } from "./run-once.js";
export { createMemoryFastStore, type MemoryFastStoreOptions } from "./memory-fast-store.js";
export { connectRedis, type RedisErrorSink } from "./redis-connect.js";
export { runScript } from "./redis-scripts.js";
export type { RedisClient } from "./redis-connect.js";
export { createRedisFastStore, type RedisFastStoreOptions } from "./redis-fast-store.js";
export { createRacing } from "./jetstream-create.js";
export { isSequenceConflict, jetStreamError } from "./jetstream-errors.js";
export { kvSubject, publishExpecting, purgeKvKey } from "./jetstream-fence.js";
