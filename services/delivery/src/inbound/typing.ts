import type { ChannelAdapter } from "@gw/channels";
import type { Logger } from "@gw/runtime";

/** Platforms show "typing…" for about 5 s (Telegram) or until the next message; renew before it fades. */
const RENEW_EVERY_MS = 4_000;
const CALL_TIMEOUT_MS = 5_000;

/**
 * Shows "typing…" in a chat while the agent works, where the platform has it (`adapter.typing`),
 * renewed until the returned stop is called; the answer itself clears it on the platforms that
 * have one. Best effort: a failed call is logged at debug level and never fails the turn.
 */
export function startTyping(adapter: ChannelAdapter, chat: string, threadId: string | undefined, logger: Logger): () => void {
  const typing = adapter.typing?.bind(adapter);
  if (typing === undefined) return () => undefined;
  let stopped = false;
  const show = () => {
    if (stopped) return;
    typing(chat, threadId, AbortSignal.timeout(CALL_TIMEOUT_MS)).catch((err: unknown) =>
      logger.debug({ err: (err as Error).message, chat }, "typing indicator failed"),
    );
  };
  show();
  const timer = setInterval(show, RENEW_EVERY_MS);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
