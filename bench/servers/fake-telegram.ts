// The Telegram Bot API fake of @gw/testing as a process of its own, so the load generator and
// the platform do not share a CPU with each other or with the gateway. Prints "listening <port>".
import { startFakeTelegram } from "@gw/testing";

const fake = await startFakeTelegram();
console.log(`listening ${new URL(fake.baseUrl).port}`);
// Messages are kept for tests; a long benchmark would grow them without bound.
setInterval(() => fake.reset(), 1_000).unref();
process.on("SIGTERM", () => void fake.close().then(() => process.exit(0)));
