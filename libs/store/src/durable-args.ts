import { GatewayError } from "@gw/contracts";

const BUCKET = /^[A-Za-z0-9_-]+$/;

/** Bucket names become JetStream stream names and directory names; keep them safe for both. */
export function checkBucket(bucket: string): string {
  if (!BUCKET.test(bucket)) {
    throw new GatewayError("INVALID_REQUEST", `bucket name must match ${BUCKET}: ${JSON.stringify(bucket)}`);
  }
  return bucket;
}

export function checkKey(key: string): string {
  if (typeof key !== "string" || key === "") {
    throw new GatewayError("INVALID_REQUEST", "key must be a non-empty string");
  }
  return key;
}

export function checkRevision(revision: number): number {
  if (!Number.isSafeInteger(revision) || revision < 1) {
    throw new GatewayError("INVALID_REQUEST", "expectedRevision must be a positive integer");
  }
  return revision;
}

export function conflict(message: string, cause?: unknown): GatewayError {
  return new GatewayError("CONFLICT", message, cause === undefined ? undefined : { cause });
}
