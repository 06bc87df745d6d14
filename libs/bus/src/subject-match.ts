/** NATS subject matching (`*` one token, `>` one or more trailing tokens) for the in-process bus. */
export function subjectMatches(pattern: string, subject: string): boolean {
  if (pattern === subject) return true;
  if (!pattern.includes("*") && !pattern.includes(">")) return false;
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    const token = p[i];
    if (token === ">") return s.length > i;
    if (i >= s.length) return false;
    if (token !== "*" && token !== s[i]) return false;
  }
  return p.length === s.length;
}
