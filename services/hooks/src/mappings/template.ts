import { asText, type LookupContext, type LookupPath, lookup, parseLookupPath } from "./lookup-path.js";

/**
 * Mapping templates (SPEC §4.2 `message` "using {{ ... }} expressions"): literal text with
 * `{{ path }}` holes, where a path is a lookup into the request (lookup-path.ts). Deliberately
 * logic-less and our own: no conditionals, loops, helpers or filters, so a template can only
 * read the request, never run code; and no HTML escaping, since the text goes to an agent, not a
 * browser. A missing field renders as "". Parsed once at start, so a broken template stops the
 * service with its key path instead of failing requests.
 */

type Part = { text: string } | { path: LookupPath };

export interface Template {
  readonly source: string;
  render(ctx: LookupContext): string;
}

/** Compiles a template; throws an Error naming the first problem and where it is. */
export function compileTemplate(source: string): Template {
  const parts: Part[] = [];
  let at = 0;
  while (at < source.length) {
    const open = source.indexOf("{{", at);
    if (open === -1) {
      parts.push({ text: source.slice(at) });
      break;
    }
    if (open > at) parts.push({ text: source.slice(at, open) });
    const close = source.indexOf("}}", open + 2);
    if (close === -1) throw new Error(`"{{" at character ${open + 1} is never closed with "}}"`);
    const inner = source.slice(open + 2, close);
    if (inner.includes("{{")) throw new Error(`"{{" at character ${open + 1} is never closed with "}}"`);
    if (inner.trim() === "") throw new Error(`empty "{{ }}" at character ${open + 1}`);
    try {
      parts.push({ path: parseLookupPath(inner) });
    } catch (err) {
      throw new Error(`at character ${open + 1}: ${(err as Error).message}`, { cause: err });
    }
    at = close + 2;
  }
  return {
    source,
    render: (ctx) => parts.map((part) => ("text" in part ? part.text : asText(lookup(part.path, ctx)))).join(""),
  };
}
