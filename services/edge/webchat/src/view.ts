/**
 * The page's DOM helpers. Text is set with textContent: nothing the gateway or a model sends is
 * parsed as HTML, except an answer's Markdown, which markdown.ts renders with raw HTML escaped.
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

/** A button that runs `action`; its failure is shown in `report` rather than lost. */
export function button(label: string, action: () => Promise<void> | void, opts: { className?: string; title?: string } = {}): HTMLButtonElement {
  const element = el("button", opts.className, label);
  element.type = "button";
  if (opts.title !== undefined) element.setAttribute("aria-label", opts.title);
  element.addEventListener("click", () => {
    element.disabled = true;
    Promise.resolve()
      .then(action)
      .catch((err: unknown) => showError(err))
      .finally(() => {
        element.disabled = false;
      });
  });
  return element;
}

/** A labelled form control: `<label>Text <control></label>`. */
export function labelled(text: string, control: HTMLElement, className?: string): HTMLLabelElement {
  const label = el("label", className, text);
  label.append(" ", control);
  return label;
}

export function option(value: string, text = value): HTMLOptionElement {
  const element = el("option", undefined, text);
  element.value = value;
  return element;
}

/** The page-wide notice (role=alert) for a control that failed. */
export function showError(err: unknown): void {
  byId("notice-text").textContent = err instanceof Error ? err.message : String(err);
  byId("notice").hidden = false;
}

export function clearError(): void {
  byId("notice").hidden = true;
}

/**
 * Asks before a destructive action, inline next to the control (keyboard-usable, unlike a
 * native confirm() it does not block the page's events): `question` with Yes and Cancel.
 */
export function confirmInline(anchor: HTMLElement, question: string, yesLabel: string, yes: () => Promise<void>): void {
  const box = el("div", "confirm");
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", question);
  const cancel = button("Cancel", () => {
    box.remove();
    anchor.focus();
  }, { className: "secondary" });
  const ok = button(yesLabel, async () => {
    box.remove();
    await yes();
  }, { className: "danger" });
  box.append(el("span", undefined, question), ok, cancel);
  box.addEventListener("keydown", (event) => {
    if (event.key === "Escape") cancel.click();
  });
  anchor.after(box);
  cancel.focus();
}

/** A time as the reader's clock shows it, or a dash for none. */
export function when(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || ms <= 0) return "—";
  return new Date(ms).toLocaleString();
}

export function setStatus(text: string, state: "connecting" | "connected" | "error", id = "status"): void {
  const status = byId(id);
  status.textContent = text;
  status.dataset.state = state;
}

/**
 * For a view the gateway sends no event about: loads it now and again every `everyMs` while
 * `root` stays shown; the interval ends itself once the tab is left. Answers the new interval
 * (clear the one an earlier call answered first).
 */
export function refreshWhileShown(root: HTMLElement, load: () => Promise<void>, everyMs: number): ReturnType<typeof setInterval> {
  void load().catch(showError);
  const timer = setInterval(() => {
    if (root.hidden) return clearInterval(timer);
    void load().catch(() => undefined);
  }, everyMs);
  return timer;
}

export function scrollToEnd(list: HTMLElement): void {
  list.scrollTop = list.scrollHeight;
}

/**
 * Replaces a container's children and gives focus back to the control that had it (by its
 * data-focus id), so a live update does not throw a keyboard user out of the list.
 */
export function replaceKeepingFocus(container: HTMLElement, children: HTMLElement[]): void {
  const focused = document.activeElement instanceof HTMLElement && container.contains(document.activeElement) ? document.activeElement.dataset.focus : undefined;
  container.replaceChildren(...children);
  if (focused === undefined) return;
  container.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focused)}"]`)?.focus();
}
