export interface BoundedBody {
  bytes: Buffer;
  /** More than `maxBytes` arrived; `bytes` holds the first `maxBytes`. */
  truncated: boolean;
}

/**
 * Reads at most `maxBytes` of a body. On overflow it stops reading at once (the iterator's
 * `return` releases or closes the connection) instead of buffering what it would throw away.
 */
export async function readBounded(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<BoundedBody> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const room = maxBytes - size;
    if (chunk.length > room) {
      if (room > 0) parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, room));
      return { bytes: Buffer.concat(parts, maxBytes), truncated: true };
    }
    parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
    size += chunk.length;
  }
  return { bytes: Buffer.concat(parts, size), truncated: false };
}
