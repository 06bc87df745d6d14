/**
 * The page's DOM, built with textContent only: nothing the gateway or a model sends is ever
 * parsed as HTML.
 */

export function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`the page has no #${id}`);
  return element as T;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (className !== undefined) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

/** Writes text into `into`: fenced code blocks as <pre><code>, the rest as pre-wrapped text. */
export function renderText(into: HTMLElement, text: string): void {
  into.replaceChildren();
  const parts = text.split(/^```[^\n]*\n?/m);
  parts.forEach((part, i) => {
    if (part === "") return;
    if (i % 2 === 1) {
      const pre = el("pre");
      pre.append(el("code", undefined, part.replace(/\n$/, "")));
      into.append(pre);
    } else {
      into.append(el("div", "text", part));
    }
  });
  if (into.childElementCount === 0) into.append(el("div", "text"));
}

/** One message in the list; `update` re-renders its text, `note` adds a tool or error line. */
export class MessageView {
  readonly item: HTMLLIElement;
  private readonly body: HTMLDivElement;
  private text = "";

  constructor(list: HTMLElement, role: "user" | "assistant", sender: string, text = "") {
    this.item = el("li", `message ${role}`);
    this.item.dataset.role = role;
    this.item.append(el("div", "sender", sender));
    this.body = el("div", "body");
    this.item.append(this.body);
    list.append(this.item);
    this.set(text);
  }

  get content(): string {
    return this.text;
  }

  set(text: string): void {
    this.text = text;
    renderText(this.body, text);
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
}

export function setStatus(text: string, state: "connecting" | "connected" | "error"): void {
  const status = byId("status");
  status.textContent = text;
  status.dataset.state = state;
}

export function scrollToEnd(list: HTMLElement): void {
  list.scrollTop = list.scrollHeight;
}
