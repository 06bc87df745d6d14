/**
 * The partition of a session key: FNV-1a over its UTF-8 bytes, modulo the partition count. The
 * same on every process and every release: changing it (or the count) moves sessions.
 */
export function partitionOf(key: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(key, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}
