// Baseline for event fan-out: a bare `ws` server that, when any client sends "go <n>", sends n
// assistant-chunk-shaped frames to every connected client; "stamp <n> <ms>" sends n such frames
// <ms> apart, each text `t<epoch ms> ` taken as it is sent (the latency baseline).
// Prints "listening <port>".
import { WebSocketServer } from "ws";

const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
wss.on("connection", (socket) => {
  socket.on("message", (data) => {
    const stamped = /^stamp (\d+) (\d+)$/.exec(String(data));
    if (stamped) {
      sendStamped(Number(stamped[1]), Number(stamped[2])).catch(() => socket.close());
      return;
    }
    const match = /^go (\d+)$/.exec(String(data));
    if (!match) return;
    for (let i = 0; i < Number(match[1]); i++) {
      const frame = JSON.stringify({
        event: "agent",
        payload: { runId: "raw", stream: "assistant", data: { type: "text", text: `chunk ${i} ` }, ts: Date.now() },
      });
      for (const client of wss.clients) client.send(frame);
    }
  });
});
async function sendStamped(count: number, gapMs: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await new Promise((resolve) => setTimeout(resolve, gapMs));
    const text = `t${(performance.timeOrigin + performance.now()).toFixed(3)} `;
    const frame = JSON.stringify({ event: "agent", payload: { runId: "raw", stream: "assistant", data: { type: "text", text } } });
    for (const client of wss.clients) client.send(frame);
  }
}

wss.on("listening", () => {
  const address = wss.address();
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : address}\n`);
});
process.on("SIGTERM", () => {
  for (const client of wss.clients) client.terminate();
  wss.close(() => process.exit(0));
});
