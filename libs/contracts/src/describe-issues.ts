import type { z } from "zod";

/** Enough to name what is wrong without echoing a whole rejected document back. */
const MAX_ISSUES = 5;

/**
 * The one wording of validation errors on every surface: `<root>.<path>: <message>` per issue,
 * at most five, joined by `; `. `root` names what was validated as the client sees it:
 * `params` (WS method params, tool input), `body` (an HTTP body), `""` (the WS envelope itself).
 */
export function describeIssues(error: z.ZodError, root: string): string {
  return error.issues
    .slice(0, MAX_ISSUES)
    .map((issue) => {
      const path = [root, ...issue.path.map(String)].filter((part) => part !== "").join(".");
      return path === "" ? issue.message : `${path}: ${issue.message}`;
    })
    .join("; ");
}
