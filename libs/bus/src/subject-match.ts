/** NATS matching of pattern tokens against subject tokens: `*` one token, `>` one or more trailing ones. */
export function tokensMatch(pattern: string[], subject: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const token = pattern[i];
    if (token === ">") return subject.length > i;
    if (i >= subject.length) return false;
    if (token !== "*" && token !== subject[i]) return false;
  }
  return pattern.length === subject.length;
}

export const hasWildcard = (pattern: string) => pattern.includes("*") || pattern.includes(">");

/** NATS subject matching (`*` one token, `>` one or more trailing tokens) for the in-process bus. */
export function subjectMatches(pattern: string, subject: string): boolean {
  if (pattern === subject) return true;
  if (!hasWildcard(pattern)) return false;
  return tokensMatch(pattern.split("."), subject.split("."));
}
