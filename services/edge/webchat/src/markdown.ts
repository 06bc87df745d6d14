/**
 * An assistant's answer as HTML: Markdown with raw HTML escaped (`html: false`), so a model that
 * writes `<script>` or `<img onerror>` shows the text, never runs it. Links may only go to
 * http(s) and mailto and open in a new tab without an opener or referrer; images only from
 * data: URLs of the common raster types (the page's CSP would block any other source anyway).
 */
import MarkdownIt from "markdown-it";

const SAFE_LINK = /^(https?:|mailto:)/i;
const SAFE_IMAGE = /^data:image\/(gif|png|jpeg|webp);/i;

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

// The parser drops an href that fails this to "" (the renderers below then leave it out).
md.validateLink = (url: string) => SAFE_LINK.test(url.trim()) || SAFE_IMAGE.test(url.trim());

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx]!;
  const href = token.attrGet("href") ?? "";
  if (!SAFE_LINK.test(href)) {
    // An unsafe or empty target: the words stay, as an anchor that goes nowhere.
    token.attrs = [];
    return "<a>";
  }
  token.attrSet("target", "_blank");
  token.attrSet("rel", "noopener noreferrer");
  return self.renderToken(tokens, idx, options);
};

md.renderer.rules.image = (tokens, idx, options, _env, self) => {
  const token = tokens[idx]!;
  const src = token.attrGet("src") ?? "";
  const alt = self.renderInlineAsText(token.children ?? [], options, _env);
  if (!SAFE_IMAGE.test(src)) return md.utils.escapeHtml(alt === "" ? "[image]" : `[image: ${alt}]`);
  token.attrSet("alt", alt);
  return self.renderToken(tokens, idx, options);
};

/** The HTML of `text` read as Markdown; safe to assign to innerHTML. */
export function renderMarkdown(text: string): string {
  return md.render(text).trim();
}
