import type { GatewayConfig } from "./schema.js";

// Matches gateway.auth.token, hooks.token, apiKey, botToken, signingSecret, appToken, accessToken,
// clientSecret, password... by key name, so secrets of channel plugins we do not know are caught too.
const SECRET_KEY = /(token|secret|password|passphrase|api_?key|private_?key|credentials?)$/i;
const URL_WITH_USERINFO = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i;

/**
 * Every non-empty secret value in the config, for log redaction: values of secret-named keys
 * anywhere in the tree, and credentials embedded in URLs (redis://:pass@host, nats://token@host).
 */
export function collectSecrets(config: GatewayConfig): string[] {
  const found = new Set<string>();
  const visit = (node: unknown, key: string | undefined): void => {
    if (typeof node === "string") {
      if (node === "") return;
      if (key !== undefined && SECRET_KEY.test(key)) found.add(node);
      if (URL_WITH_USERINFO.test(node)) for (const secret of urlCredentials(node)) found.add(secret);
    } else if (Array.isArray(node)) {
      for (const item of node) visit(item, undefined);
    } else if (node !== null && typeof node === "object") {
      for (const [childKey, child] of Object.entries(node)) visit(child, childKey);
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
