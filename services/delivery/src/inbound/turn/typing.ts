import type { ChannelAdapter } from "@gw/channels";
import type { Logger } from "@gw/runtime";

/** Platforms show "typing…" for about 5 s (Telegram) or until the next message; renew before it fades. */
const RENEW_EVERY_MS = 4_000;
const CALL_TIMEOUT_MS = 5_000;

/**
 * Shows "typing…" in a chat while the agent works, where the platform has it (`adapter.typing`),
 * renewed until the returned stop is called, which hides it where the platform can
 * (`typing.hide`); elsewhere the answer clears it, or it fades within seconds. Best effort: a
 * failed call is logged at debug level and never fails the turn.
 */
export function startTyping(adapter: ChannelAdapter, chat: string, threadId: string | undefined, logger: Logger, replyingTo?: string): () => void {
  const typing = adapter.typing;
  if (typing === undefined) return () => undefined;
  let stopped = false;
  const call = (what: string, fn: (chat: string, threadId: string | undefined, signal: AbortSignal, replyingTo?: string) => Promise<void>): void => {
    fn(chat, threadId, AbortSignal.timeout(CALL_TIMEOUT_MS), replyingTo).catch((err: unknown) =>
      logger.debug({ err: (err as Error).message, chat }, `${what} failed`),
    );
  };
  const show = () => {
    if (!stopped) call("typing indicator", (c, t, signal, replyingTo) => typing.show(c, t, signal, replyingTo));
  };
  show();
  const timer = setInterval(show, typing.renewMs ?? RENEW_EVERY_MS);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
    const hide = typing.hide?.bind(typing);
    if (hide !== undefined) call("hiding the typing indicator", (c, t, signal) => hide(c, t, signal));
  };
}
