export const REDACTED = "[REDACTED]";

/** Shorter values would match ordinary text ("on", "123") and blank out whole log lines. */
const MIN_SECRET_LENGTH = 4;

/**
 * A function that replaces every occurrence of the given secrets in a serialized log line.
 * A secret appears JSON-escaped inside a JSON line when it holds quotes, backslashes or control
 * characters, so both spellings are matched.
 */
export function createSecretScrubber(secrets: readonly string[]): (line: string) => string {
  const variants = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    variants.add(secret);
    variants.add(JSON.stringify(secret).slice(1, -1));
  }
  if (variants.size === 0) return (line) => line;
  // Longest first, so a secret that contains another is replaced whole.
  const alternatives = [...variants].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const pattern = new RegExp(alternatives.join("|"), "g");
  return (line) => line.replace(pattern, REDACTED);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
