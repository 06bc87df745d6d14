/**
 * Store keys are arbitrary strings (session keys hold `:`, `@`, `+`, spaces, emoji), but
 * JetStream KV keys allow only `[-/_=.a-zA-Z0-9]` and file names allow no `/`.
 */

const NATS_PLAIN = /[A-Za-z0-9_/-]/;
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Readable escaping, so `nats kv ls` still shows recognisable keys: safe ASCII passes through,
 * every other UTF-8 byte becomes `=HH`. `.` is escaped too, as JetStream treats it as a token
 * separator (no empty, leading or trailing tokens).
 */
export function encodeNatsKey(key: string): string {
  let out = "";
  for (const char of key) {
    if (char.length === 1 && NATS_PLAIN.test(char)) {
      out += char;
      continue;
    }
    for (const byte of utf8.encode(char)) out += `=${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Undefined for keys this codec did not write (foreign writers to the same bucket). */
export function decodeNatsKey(encoded: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const char = encoded.charAt(i);
    if (char === "=") {
      const hex = encoded.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (NATS_PLAIN.test(char)) {
      bytes.push(char.charCodeAt(0));
    } else {
      return undefined;
    }
  }
  try {
    return strictUtf8.decode(new Uint8Array(bytes));
  } catch {
    return undefined;
  }
}

/** Leaves room under the common 255-byte name limit for the temp-file prefix and suffix. */
const MAX_PLAIN_NAME = 200;

/**
 * base64url: no `/`, no leading `.`, same on every file system. Keys too long for a file name
 * get a `~` + sha256 name instead (base64url never contains `~`); the file's header holds the key.
 */
export function fileNameForKey(key: string, sha256Hex: (text: string) => string): string {
  const plain = Buffer.from(key, "utf8").toString("base64url");
  return plain.length <= MAX_PLAIN_NAME ? plain : `~${sha256Hex(key)}`;
}

/** The key for a plain name; undefined for hashed names (read the header) and foreign files. */
export function keyFromFileName(name: string): string | undefined {
  if (name.startsWith("~") || name.startsWith(".") || !/^[A-Za-z0-9_-]+$/.test(name)) return undefined;
  const key = Buffer.from(name, "base64url").toString("utf8");
  return Buffer.from(key, "utf8").toString("base64url") === name ? key : undefined;
}
