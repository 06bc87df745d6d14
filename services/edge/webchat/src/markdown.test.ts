import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./markdown.js";

describe("renderMarkdown", () => {
  it("shows raw HTML as text: no tag, no handler survives", () => {
    const html = renderMarkdown('Look <img src=x onerror=alert(1)> and <script>alert("hi")</script>\n\n<iframe src="https://evil.example"></iframe>');
    expect(html).not.toMatch(/<(img|script|iframe)\b/i);
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain("&lt;script&gt;alert(&quot;hi&quot;)&lt;/script&gt;");
    expect(html).toContain("&lt;iframe");
  });

  it("renders code blocks, lists, emphasis and headings", () => {
    const html = renderMarkdown("# Title\n\n- one\n- **two**\n\n1. first\n\n```ts\nconst a = 1 < 2;\n```\n\nand `inline`");
    expect(html).toContain("<h1>Title</h1>");
    expect(html).toContain("<ul>\n<li>one</li>\n<li><strong>two</strong></li>\n</ul>");
    expect(html).toContain("<ol>");
    expect(html).toContain('<pre><code class="language-ts">const a = 1 &lt; 2;\n</code></pre>');
    expect(html).toContain("<code>inline</code>");
  });

  it("opens http, https and mailto links in a new tab with no opener or referrer", () => {
    const html = renderMarkdown("[docs](https://example.com/a?b=1) <http://example.org> [mail](mailto:a@example.com)");
    expect(html).toContain('<a href="https://example.com/a?b=1" target="_blank" rel="noopener noreferrer">docs</a>');
    expect(html).toContain('<a href="http://example.org" target="_blank" rel="noopener noreferrer">http://example.org</a>');
    expect(html).toContain('<a href="mailto:a@example.com" target="_blank" rel="noopener noreferrer">mail</a>');
  });

  it("leaves a link to anything else as its words, not a link", () => {
    for (const target of ["javascript:alert(1)", "JAVASCRIPT:alert(1)", "jav&#x61;script:alert(1)", "vbscript:x", "data:text/html,<b>x</b>", "/relative", "file:///etc/passwd"]) {
      const html = renderMarkdown(`[click](${target})`);
      expect(html, target).not.toMatch(/<a\b|href=/i);
      expect(html, target).toContain("click");
    }
    expect(renderMarkdown("<javascript:alert(1)>")).not.toMatch(/<a\b/);
  });

  it("shows data: images of raster types and any other image as text", () => {
    const png = "data:image/png;base64,iVBORw0KGgo=";
    expect(renderMarkdown(`![a chart](${png})`)).toContain(`<img src="${png}" alt="a chart">`);
    for (const src of ["https://tracker.example/p.gif", "data:image/svg+xml;base64,PHN2Zz4=", "javascript:alert(1)"]) {
      const html = renderMarkdown(`![pixel](${src})`);
      expect(html, src).not.toMatch(/<img\b|src=/);
      expect(html, src).toContain("pixel");
    }
  });
});
