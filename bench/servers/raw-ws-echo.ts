// Baseline: a bare `ws` server on loopback that echoes every frame. Prints "listening <port>".
import { WebSocketServer } from "ws";

const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
wss.on("connection", (socket) => {
  socket.on("message", (data, isBinary) => socket.send(data, { binary: isBinary }));
});
wss.on("listening", () => {
  const address = wss.address();
  process.stdout.write(`listening ${typeof address === "object" && address ? address.port : address}\n`);
});
process.on("SIGTERM", () => {
  for (const client of wss.clients) client.terminate();
  wss.close(() => process.exit(0));
});
