// Baseline: a bare NATS responder that echoes each request. Args: <url> <subject>. Prints "ready".
import { connect } from "@nats-io/transport-node";

const [url, subject] = process.argv.slice(2);
if (!url || !subject) throw new Error("usage: raw-nats-responder <url> <subject>");
const nc = await connect({ servers: url, name: "bench-responder" });
nc.subscribe(subject, {
  queue: "bench",
  callback: (err, msg) => {
    if (!err) msg.respond(msg.data);
  },
});
await nc.flush();
process.stdout.write("ready\n");
process.on("SIGTERM", () => {
  nc.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
