/**
 * Tool-name globs, for agents' allow lists (`everything.*`) and MCP servers' allowTools and
 * denyTools: `*` matches any run of characters, everything else itself.
 */
export function globMatches(glob: string, name: string): boolean {
  if (!glob.includes("*")) return glob === name;
  const pattern = glob
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${pattern}$`).test(name);
}

/** Whether any of `globs` matches `name`. */
export function allows(globs: readonly string[], name: string): boolean {
  return globs.some((glob) => globMatches(glob, name));
}
