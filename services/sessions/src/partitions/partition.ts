/**
 * The partition of a session key: FNV-1a over its UTF-8 bytes, modulo the partition count (the
 * bus's hashPartition, which run events are partitioned by too). The same on every process and
 * every release: changing it (or the count) moves sessions.
 */
export { hashPartition as partitionOf } from "@gw/bus";
