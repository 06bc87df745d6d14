/**
 * A platform's published send limits, declared by its plugin (`rates`) and applied by delivery's
 * pacer before every platform call, shared by every delivery replica (the counts live in the
 * FastStore). A queued part waits for its turn; it is never dropped for being fast.
 */
export interface RateRule {
  /** Named in logs and channels.status. */
  name: string;
  /** `chat`: per recipient of one account; `account`: per bot / number. */
  scope: "chat" | "account";
  max: number;
  windowMs: number;
  /** Applies only to some recipients (e.g. group chats, where the platform counts them apart). */
  appliesTo?: (to: string) => boolean;
}

/** One message a second to one chat: what most platforms ask of bots. */
export const PER_CHAT_PER_SECOND: Readonly<RateRule> = Object.freeze({ name: "per-chat", scope: "chat", max: 1, windowMs: 1_000 });

/** The rules among `rules` that apply to a send to `to`. */
export function rateRulesFor(rules: readonly RateRule[], to: string): RateRule[] {
  return rules.filter((rule) => rule.appliesTo === undefined || rule.appliesTo(to));
}
