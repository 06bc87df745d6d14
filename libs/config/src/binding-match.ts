/**
 * Routing bindings (issue 26 §2): which agent answers an inbound message. Pure logic, shared by
 * delivery (which routes) and the config schema (which refuses bindings that can never answer).
 */

/** What a binding matches; `channel` is required, every other key narrows it. */
export interface BindingMatch {
  channel: string;
  accountId?: string;
  /** A chat id (any chat), or a user id (that user's direct chat with the bot). */
  peer?: string;
  /** A group chat id: group messages only. */
  group?: string;
  /** A thread or topic id inside a chat. */
  thread?: string;
}

export interface BindingRule {
  match: BindingMatch;
  agentId: string;
}

/** The facts of one inbound message a binding can look at. */
export interface RouteTarget {
  channelId: string;
  accountId: string;
  chat: string;
  chatType: "direct" | "group";
  sender: string;
  threadId?: string;
}

/** The keys that narrow a match, most specific first: the first one a binding has is its level. */
const LEVELS = ["peer", "thread", "group", "accountId"] as const;
type NarrowingKey = (typeof LEVELS)[number];

/** 4 for a peer binding, 3 thread, 2 group, 1 account, 0 for a whole channel: the higher wins. */
export function specificityOf(match: BindingMatch): number {
  const index = LEVELS.findIndex((key) => match[key] !== undefined);
  return index === -1 ? 0 : LEVELS.length - index;
}

/** The name of a binding's level, for messages: "peer", "thread", "group", "account", "channel". */
export function levelName(match: BindingMatch): string {
  const key = LEVELS.find((k) => match[k] !== undefined);
  return key === undefined ? "channel" : key === "accountId" ? "account" : key;
}

/** User ids compare as allowFrom's do: without case or surrounding space. */
function sameUser(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

export function matches(match: BindingMatch, target: RouteTarget): boolean {
  if (match.channel !== target.channelId) return false;
  if (match.accountId !== undefined && match.accountId !== target.accountId) return false;
  // A user id names that person's direct chat only: a group is one shared session, and one
  // member's messages going to another agent would split its conversation.
  if (match.peer !== undefined && match.peer !== target.chat && !(target.chatType === "direct" && sameUser(match.peer, target.sender))) {
    return false;
  }
  if (match.group !== undefined && (target.chatType !== "group" || match.group !== target.chat)) return false;
  if (match.thread !== undefined && match.thread !== (target.threadId ?? "")) return false;
  return true;
}

/**
 * The index of the binding that answers `target`, or undefined for the channel's own agent: the
 * most specific match wins, ties go to the first listed.
 */
export function bindingFor(bindings: readonly BindingRule[], target: RouteTarget): number | undefined {
  let best: number | undefined;
  let bestLevel = -1;
  bindings.forEach((binding, i) => {
    if (!matches(binding.match, target)) return;
    const level = specificityOf(binding.match);
    if (level > bestLevel) {
      best = i;
      bestLevel = level;
    }
  });
  return best;
}

export interface BindingProblem {
  /** The binding the problem is about (the later one of a pair). */
  index: number;
  message: string;
}

/**
 * Bindings that can never answer: a `group` with a `peer` other than that group (a user id
 * matches direct chats only), or a later binding of the same level whose every key an earlier
 * one has with the same value (the earlier matches all it matches and wins the tie).
 */
export function unreachableBindings(bindings: readonly BindingRule[]): BindingProblem[] {
  const problems: BindingProblem[] = [];
  bindings.forEach(({ match }, j) => {
    if (match.group !== undefined && match.peer !== undefined && match.peer !== match.group) {
      problems.push({ index: j, message: "never matches: a group binding's peer must be the group itself (a user id as peer matches direct chats only)" });
      return;
    }
    const shadow = bindings.findIndex((earlier, i) => i < j && sameLevel(earlier.match, match) && covers(earlier.match, match));
    if (shadow !== -1) {
      problems.push({ index: j, message: `never answers: bindings[${shadow}] matches every message it matches, at the same specificity (${levelName(match)}), and is listed first` });
    }
  });
  return problems;
}

/**
 * Pairs of the same level that can both match one message without either covering the other:
 * where both match, the earlier answers. Often meant (an account's exception before a channel's
 * rule), so these are warnings, not errors.
 */
export function overlappingBindings(bindings: readonly BindingRule[]): BindingProblem[] {
  const unreachable = new Set(unreachableBindings(bindings).map((p) => p.index));
  const problems: BindingProblem[] = [];
  bindings.forEach(({ match }, j) => {
    if (unreachable.has(j)) return;
    const earlier = bindings.findIndex((other, i) => i < j && !unreachable.has(i) && sameLevel(other.match, match) && compatible(other.match, match));
    if (earlier === -1) return;
    problems.push({
      index: j,
      message: `overlaps bindings[${earlier}] (both ${levelName(match)} bindings): for messages both match, bindings[${earlier}] answers`,
    });
  });
  return problems;
}

function sameLevel(a: BindingMatch, b: BindingMatch): boolean {
  return specificityOf(a) === specificityOf(b);
}

/** Whether `outer` matches every message `inner` matches: each of its keys is in `inner`, equal. */
function covers(outer: BindingMatch, inner: BindingMatch): boolean {
  if (outer.channel !== inner.channel) return false;
  return LEVELS.every((key: NarrowingKey) => outer[key] === undefined || outer[key] === inner[key]);
}

/** Whether some message could match both: no key both have differs. */
function compatible(a: BindingMatch, b: BindingMatch): boolean {
  if (a.channel !== b.channel) return false;
  return LEVELS.every((key: NarrowingKey) => a[key] === undefined || b[key] === undefined || a[key] === b[key]);
}
