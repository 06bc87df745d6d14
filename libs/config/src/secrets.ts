import type { GatewayConfig } from "./schema.js";

// Matches gateway.auth.token, hooks.token, apiKey (and each of apiKeys), botToken, signingSecret, appToken, accessToken,
// clientSecret, password... by key name, so secrets of channel plugins we do not know are caught too.
const SECRET_KEY = /(token|secret|password|passphrase|api_?keys?|private_?key|credentials?)$/i;
const URL_WITH_USERINFO = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i;

/**
 * Every non-empty secret value in the config, for log redaction: values of secret-named keys
 * anywhere in the tree, header values of 8 characters or more (an MCP server's `Authorization`;
 * shorter ones are flags, not credentials), and credentials embedded in URLs
 * (redis://:pass@host, nats://token@host).
 */
export function collectSecrets(config: GatewayConfig): string[] {
  const found = new Set<string>();
  const visit = (node: unknown, key: string | undefined, inHeaders = false): void => {
    if (typeof node === "string") {
      if (node === "") return;
      if (key !== undefined && SECRET_KEY.test(key)) found.add(node);
      if (inHeaders && node.length >= 8) found.add(node);
      if (URL_WITH_USERINFO.test(node)) for (const secret of urlCredentials(node)) found.add(secret);
    } else if (Array.isArray(node)) {
      // A list under a secret-named key is a list of secrets (models.providers.<id>.apiKeys).
      for (const item of node) visit(item, key);
    } else if (node !== null && typeof node === "object") {
      for (const [childKey, child] of Object.entries(node)) visit(child, childKey, inHeaders || HEADERS_KEY.test(childKey));
    }
  };
  visit(config, undefined);
  return [...found];
}

function urlCredentials(text: string): string[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [];
  }
  // With no password the user part is the credential (NATS token auth: nats://<token>@host).
  const raw = url.password !== "" ? url.password : url.username;
  if (raw === "") return [];
  const decoded = safeDecode(raw);
  return decoded === raw ? [raw] : [raw, decoded];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** What `maskSecrets` puts in place of a secret. */
export const SECRET_MASK = "********";
/** Header values are credentials as often as not (Authorization, X-Api-Key...): all masked. */
const HEADERS_KEY = /headers$/i;

/**
 * A copy of the config to show a person (`gateway config print`): the value of every
 * secret-named key, every value under a `headers` map, the credentials in URLs, and any other
 * string equal to one of those secrets become SECRET_MASK. Everything else is as loaded.
 */
export function maskSecrets(config: GatewayConfig): unknown {
  const secrets = new Set(collectSecrets(config));
  const visit = (node: unknown, key: string | undefined, inHeaders: boolean): unknown => {
    if (typeof node === "string") {
      if (node === "") return node;
      if (inHeaders || (key !== undefined && SECRET_KEY.test(key)) || secrets.has(node)) return SECRET_MASK;
      return URL_WITH_USERINFO.test(node) ? node.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, `$1${SECRET_MASK}@`) : node;
    }
    if (Array.isArray(node)) return node.map((item) => visit(item, undefined, inHeaders));
    if (node !== null && typeof node === "object") {
      return Object.fromEntries(
        Object.entries(node).map(([childKey, child]) => [childKey, visit(child, childKey, inHeaders || HEADERS_KEY.test(childKey))]),
      );
    }
    return node;
  };
  return visit(config, undefined, false);
}
