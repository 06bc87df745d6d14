import type { Unsubscribe } from "./bus.js";
import { hasWildcard, tokensMatch } from "./subject-match.js";

export interface Registration<H> {
  pattern: string;
  queue: string | undefined;
  handler: H;
}

interface Entry<H> {
  registration: Registration<H>;
  /** Registration order: a subject's receivers come in it, as they did from one list. */
  seq: number;
  /** The pattern's tokens when it has wildcards (`*`, `>`); undefined for a literal subject. */
  tokens: string[] | undefined;
}

interface Resolved<H> {
  plain: Registration<H>[];
  groups: Array<{ queue: string; members: Registration<H>[] }>;
}

/** Resolved subjects kept at most; per-run event subjects are many and short-lived. */
const RESOLVED_CACHE_LIMIT = 4_096;

/**
 * Picks the registrations that receive one message: every plain subscriber and one member (round
 * robin) of each queue group, as NATS does. Literal patterns are found by a map lookup and only
 * wildcard ones are matched, token by token against the subject split once; what matched a
 * subject is cached, and a literal registration coming or going drops only its own subject's
 * entry (a run's subscriptions come and go all the time), a wildcard one the whole cache.
 */
export class SubjectRegistry<H> {
  private readonly literal = new Map<string, Entry<H>[]>();
  private readonly wild = new Set<Entry<H>>();
  private readonly cursor = new Map<string, number>();
  private readonly resolved = new Map<string, Resolved<H>>();
  private seq = 0;

  add(registration: Registration<H>): Unsubscribe {
    const entry: Entry<H> = { registration, seq: this.seq++, tokens: hasWildcard(registration.pattern) ? registration.pattern.split(".") : undefined };
    if (entry.tokens === undefined) {
      const same = this.literal.get(registration.pattern);
      if (same) same.push(entry);
      else this.literal.set(registration.pattern, [entry]);
      this.resolved.delete(registration.pattern);
    } else {
      this.wild.add(entry);
      this.resolved.clear();
    }
    let registered = true;
    return () => {
      if (!registered) return;
      registered = false;
      this.remove(entry);
    };
  }

  clear(): void {
    this.literal.clear();
    this.wild.clear();
    this.resolved.clear();
  }

  targets(subject: string): Registration<H>[] {
    const { plain, groups } = this.resolve(subject);
    if (groups.length === 0) return plain;
    const picked = [...plain];
    for (const { queue, members } of groups) {
      const next = (this.cursor.get(queue) ?? 0) % members.length;
      this.cursor.set(queue, next + 1);
      picked.push(members[next]!);
    }
    return picked;
  }

  private remove(entry: Entry<H>): void {
    const { pattern } = entry.registration;
    if (entry.tokens !== undefined) {
      if (this.wild.delete(entry)) this.resolved.clear();
      return;
    }
    const same = this.literal.get(pattern);
    const at = same?.indexOf(entry) ?? -1;
    if (at === -1) return;
    same!.splice(at, 1);
    if (same!.length === 0) this.literal.delete(pattern);
    this.resolved.delete(pattern);
  }

  private resolve(subject: string): Resolved<H> {
    const cached = this.resolved.get(subject);
    if (cached !== undefined) return cached;
    const matched: Entry<H>[] = [...(this.literal.get(subject) ?? [])];
    if (this.wild.size > 0) {
      const tokens = subject.split(".");
      const before = matched.length;
      for (const entry of this.wild) if (tokensMatch(entry.tokens!, tokens)) matched.push(entry);
      if (before > 0 && matched.length > before) matched.sort((a, b) => a.seq - b.seq);
    }
    const plain: Registration<H>[] = [];
    const groups = new Map<string, Registration<H>[]>();
    for (const { registration } of matched) {
      if (registration.queue === undefined) plain.push(registration);
      else groups.set(registration.queue, [...(groups.get(registration.queue) ?? []), registration]);
    }
    const result = { plain, groups: [...groups].map(([queue, members]) => ({ queue, members })) };
    if (this.resolved.size >= RESOLVED_CACHE_LIMIT) this.resolved.clear();
    this.resolved.set(subject, result);
    return result;
  }
}
