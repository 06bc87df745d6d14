/**
 * One message in the chat: the user's words as plain text, an assistant's as Markdown
 * (markdown.ts), its tool calls as collapsible cards, images it returned, and on hover or focus
 * the run's model and timing.
 */
import type { PayloadItem } from "@gw/client";
import { renderMarkdown } from "./markdown.js";
import { el } from "./view.js";

/** An image item of an answer: a data: URL of a raster type (the page's CSP allows no other source). */
const DATA_IMAGE = /^data:image\/(gif|png|jpeg|webp);base64,[A-Za-z0-9+/=]+$/;

export interface ImageItem extends PayloadItem {
  url?: string;
  data?: string;
  mimeType?: string;
  alt?: string;
}

/** Where an image item may be shown from, or undefined when the page must not load it. */
export function imageSource(item: ImageItem): string | undefined {
  const src = item.url ?? (item.data !== undefined && item.mimeType !== undefined ? `data:${item.mimeType};base64,${item.data}` : undefined);
  return src !== undefined && DATA_IMAGE.test(src) ? src : undefined;
}

/** `value` as readable text: strings as they are, anything else as indented JSON. */
function shown(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

export class MessageView {
  readonly item: HTMLLIElement;
  private readonly body: HTMLDivElement;
  private readonly meta: HTMLSpanElement;
  private readonly tools = new Map<string, HTMLDetailsElement>();
  private text = "";

  constructor(
    list: HTMLElement,
    private readonly role: "user" | "assistant",
    sender: string,
    text = "",
  ) {
    this.item = el("li", `message ${role}`);
    this.item.dataset.role = role;
    const head = el("div", "sender", sender);
    this.meta = el("span", "meta");
    head.append(this.meta);
    this.body = el("div", "body");
    this.item.append(head, this.body);
    list.append(this.item);
    this.set(text);
  }

  get content(): string {
    return this.text;
  }

  set(text: string): void {
    this.text = text;
    if (this.role === "assistant") {
      // Safe by construction: markdown.ts escapes raw HTML and filters link and image targets.
      this.body.innerHTML = renderMarkdown(text);
    } else {
      this.body.replaceChildren(el("div", "text", text));
    }
  }

  append(chunk: string): void {
    this.set(this.text + chunk);
  }

  pending(on: boolean): void {
    this.item.classList.toggle("pending", on);
  }

  note(text: string, kind: "tool" | "error"): HTMLElement {
    const line = el("div", kind, text);
    this.item.append(line);
    return line;
  }

  /** The model and timing of the run behind this answer, shown on hover or focus. */
  setMeta(text: string): void {
    this.meta.textContent = text;
    this.item.title = text;
    this.item.tabIndex = 0;
  }

  /** A tool call's card: opened by `start`, completed by `result` or `error` (same toolCallId). */
  tool(data: { phase?: string; name?: string; toolCallId?: string; input?: unknown; result?: unknown; error?: string }): void {
    const id = data.toolCallId ?? `${this.tools.size}`;
    let card = this.tools.get(id);
    if (card === undefined) {
      card = el("details", "tool-card");
      card.dataset.tool = id;
      const summary = el("summary");
      summary.append(el("span", "tool-name", data.name ?? "tool"), el("span", "tool-state", "running…"));
      card.append(summary);
      this.tools.set(id, card);
      this.body.before(card);
    }
    if (data.phase === "start") {
      card.append(el("div", "tool-label", "Input"), el("pre", "tool-input", shown(data.input ?? {})));
    } else if (data.phase === "result" || data.phase === "error") {
      const failed = data.phase === "error";
      card.classList.toggle("failed", failed);
      card.querySelector(".tool-state")!.textContent = failed ? "failed" : "done";
      card.append(el("div", "tool-label", failed ? "Error" : "Result"), el("pre", failed ? "tool-error" : "tool-result", shown(failed ? data.error : data.result)));
    }
  }

  /** The images that came with a user message, as `sessions.preview` lists them (never the bytes): one label each. */
  attachments(list: readonly AttachmentView[]): void {
    if (list.length === 0) return;
    const row = el("div", "attachments");
    for (const item of list) row.append(el("span", "attachment", attachmentLabel(item)));
    this.item.append(row);
  }

  /** The image items of an answer, below its text. */
  images(payloads: readonly PayloadItem[]): void {
    for (const item of payloads as readonly ImageItem[]) {
      if (item.type !== "image") continue;
      const src = imageSource(item);
      if (src === undefined) {
        this.note("An image that this page cannot show (only inline images are allowed).", "tool");
        continue;
      }
      const image = el("img", "answer-image");
      image.src = src;
      image.alt = item.alt ?? "image from the answer";
      this.item.append(image);
    }
  }
}

/** An attachment as `sessions.preview` shows it. */
export interface AttachmentView {
  type: string;
  mimeType?: string;
  url?: string;
  size?: number;
}

/** "image (image/jpeg, 1.5 KB)", or with the host it lives on for an https image. */
export function attachmentLabel(item: AttachmentView): string {
  const facts = [item.mimeType, item.size === undefined ? undefined : bytesText(item.size), hostOf(item.url)].filter(Boolean);
  return facts.length ? `${item.type} (${facts.join(", ")})` : item.type;
}

function bytesText(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

function hostOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}
