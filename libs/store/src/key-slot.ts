/**
 * Redis Cluster's key -> slot mapping (CRC16/XMODEM of the key's hash tag, mod 16384), so the
 * Redis FastStore can send multi-key commands to one slot at a time.
 */

const SLOTS = 16_384;

const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc;
}

/** The part of a key Redis Cluster hashes: the first non-empty `{...}`, else the whole key. */
export function hashTagOf(key: string): string {
  const open = key.indexOf("{");
  if (open === -1) return key;
  const close = key.indexOf("}", open + 1);
  if (close === -1 || close === open + 1) return key;
  return key.slice(open + 1, close);
}

export function keySlot(key: string): number {
  return crc16(Buffer.from(hashTagOf(key), "utf8")) % SLOTS;
}

/** Indices of `keys` grouped by slot, each group in the keys' original order. */
export function groupBySlot(keys: readonly string[]): number[][] {
  const groups = new Map<number, number[]>();
  keys.forEach((key, i) => {
    const slot = keySlot(key);
    const group = groups.get(slot);
    if (group === undefined) groups.set(slot, [i]);
    else group.push(i);
  });
  return [...groups.values()];
}
