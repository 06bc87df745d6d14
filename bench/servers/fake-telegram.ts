// The Telegram Bot API fake of @gw/testing as a process of its own, so the load generator and
// the platform do not share a CPU with each other or with the gateway. Prints "listening <port>".
import { DEFAULT_TELEGRAM_CHATS, startFakeTelegram } from "@gw/testing";

/** Private chats 5001..5064: the benchmark spreads its sends over them, as a bot's traffic is. */
export const BENCH_CHATS = 64;

const chats = [...DEFAULT_TELEGRAM_CHATS, ...Array.from({ length: BENCH_CHATS }, (_, i) => ({ id: 5001 + i, type: "private" as const }))];
const fake = await startFakeTelegram({ chats });
console.log(`listening ${new URL(fake.baseUrl).port}`);
// Messages are kept for tests; a long benchmark would grow them without bound.
setInterval(() => fake.reset(), 1_000).unref();
process.on("SIGTERM", () => {
  fake.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
