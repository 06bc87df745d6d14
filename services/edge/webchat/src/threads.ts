/**
 * The conversations this browser has had with the gateway: the connection's own session and its
 * threads (`<home>:<name>`, docs/protocol.md). A webchat connection may not list sessions, so the
 * browser remembers the threads it started, per owner, in localStorage.
 */

export interface Thread {
  key: string;
  title: string;
}

const MAX_THREADS = 50;
const TITLE_CHARS = 40;

function storageKey(home: string): string {
  return `gw.webchat.threads:${home}`;
}

export class Threads {
  private threads: Thread[];

  constructor(
    readonly home: string,
    private readonly storage: Storage,
  ) {
    this.threads = [{ key: home, title: "Main" }, ...this.load().filter((t) => t.key !== home)];
  }

  list(): readonly Thread[] {
    return this.threads;
  }

  /** The thread last opened in this browser, else the main one. */
  lastOpened(): string {
    const key = this.storage.getItem(`${storageKey(this.home)}:current`);
    return key !== null && this.threads.some((t) => t.key === key) ? key : this.home;
  }

  open(key: string): void {
    this.storage.setItem(`${storageKey(this.home)}:current`, key);
  }

  /** A new thread, first in the list after the main one. */
  create(): Thread {
    const name = crypto.randomUUID().slice(0, 8);
    const thread = { key: `${this.home}:${name}`, title: "New chat" };
    this.threads.splice(1, 0, thread);
    this.threads = this.threads.slice(0, MAX_THREADS);
    this.save();
    return thread;
  }

  /** A new thread takes its title from its first message. */
  titleFrom(key: string, message: string): void {
    const thread = this.threads.find((t) => t.key === key);
    if (thread === undefined || thread.key === this.home || thread.title !== "New chat") return;
    const oneLine = message.replace(/\s+/g, " ").trim();
    thread.title = oneLine.length > TITLE_CHARS ? `${oneLine.slice(0, TITLE_CHARS - 1)}…` : oneLine || "New chat";
    this.save();
  }

  private load(): Thread[] {
    try {
      const parsed: unknown = JSON.parse(this.storage.getItem(storageKey(this.home)) ?? "[]");
      if (!Array.isArray(parsed)) return [];
      return parsed.filter(
        (t): t is Thread =>
          typeof t === "object" && t !== null && typeof t.key === "string" && t.key.startsWith(`${this.home}:`) && typeof t.title === "string",
      );
    } catch {
      return [];
    }
  }

  private save(): void {
    this.storage.setItem(storageKey(this.home), JSON.stringify(this.threads.slice(1)));
  }
}
