/**
 * What the fake model does, chosen by words in the latest user message, so e2e tests steer
 * a real provider adapter through the real wire format:
 * - `tools:a,b`   first turn calls tools a and b (wire names), then answers once results are back
 *                 (`http__fetch` gets a URL, `message__send` a message text, a name with `weather`
 *                 `{ city: "Paris" }`, one with `echo` `{ message: "hi from the model" }`, `greet`
 *                 `{ name: "Ada" }`, `sum` `{ a: 2, b: 3 }`, others no arguments): the agent's tools
 *                 or the client's; with `quote` too, the answer quotes the results
 *                 ("Tools said: <r1> | <r2>")
 * - `slow`        streams 40 chunks, 100 ms apart (abort and runner-death tests)
 * - `pause<ms>`   answers "You said: <message>" like the default, taking about <ms> ms (queued-turn tests)
 * - `fail500`     always HTTP 500;  `fail429` HTTP 429 with retry-after: 0 on the first try of each conversation
 * - `busy429`     HTTP 429 with retry-after: 0 on every try (retries run out at once)
 * - `leakkey401`, `leakkey500`  always that status, the error message quoting the request's
 *                 credential header (`authorization` or `x-api-key`), as careless upstreams do
 * - `hang`        sends headers then nothing (stalled stream)
 * - `drop`        sends one chunk then cuts the connection
 * - `<transcript>…</transcript>` (the runner's summarization request) answers
 *                 "Fake summary of <n> transcript lines." whatever the transcript says
 * - otherwise     answers "You said: <message>" in three chunks
 */
export type FakeToolCall = { id: string; name: string; arguments: Record<string, unknown> };

export type FakeTurn =
  | { kind: "text"; chunks: string[]; delayMs: number }
  | { kind: "tools"; calls: FakeToolCall[] }
  | { kind: "status"; status: number; retryAfter?: string; echoCredential?: boolean }
  | { kind: "hang" }
  | { kind: "drop"; chunk: string };

export interface FakeConversation {
  lastUser: string;
  /** Tool results already in the conversation. */
  toolResults: string[];
  /** Earlier requests seen with this same last user message. */
  attempt: number;
}

function split(text: string, parts: number): string[] {
  const size = Math.ceil(text.length / parts);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Arguments the fake model passes to a tool it calls, by the tool's wire name. */
function toolArguments(name: string): Record<string, unknown> {
  if (name.includes("fetch")) return { url: "http://127.0.0.1:9/" };
  if (name.includes("message")) return { message: "sent by the agent's message tool" };
  if (name.includes("weather")) return { city: "Paris" };
  if (name.includes("echo")) return { message: "hi from the model" };
  if (name.includes("greet")) return { name: "Ada" };
  if (name.includes("sum")) return { a: 2, b: 3 };
  return {};
}

export function planTurn(c: FakeConversation): FakeTurn {
  const msg = c.lastUser;
  // First: a transcript quotes earlier user messages, which may hold any of the words below.
  const transcript = /<transcript>\n?([\s\S]*?)\n?<\/transcript>/.exec(msg);
  if (transcript) {
    const lines = transcript[1]!.split("\n").filter((line) => line.trim() !== "").length;
    return { kind: "text", chunks: split(`Fake summary of ${lines} transcript lines.`, 3), delayMs: 0 };
  }
  if (msg.includes("fail500")) return { kind: "status", status: 500 };
  const leak = /leakkey(401|500)/.exec(msg);
  if (leak) return { kind: "status", status: Number(leak[1]), echoCredential: true };
  if (msg.includes("busy429")) return { kind: "status", status: 429, retryAfter: "0" };
  if (msg.includes("fail429") && c.attempt === 0) return { kind: "status", status: 429, retryAfter: "0" };
  if (msg.includes("hang")) return { kind: "hang" };
  if (msg.includes("drop")) return { kind: "drop", chunk: "partial " };
  const tools = /tools:([\w,.-]+)/.exec(msg);
  if (tools && c.toolResults.length === 0) {
    return {
      kind: "tools",
      calls: tools[1]!.split(",").map((name, i) => ({ id: `call_${i + 1}`, name, arguments: toolArguments(name) })),
    };
  }
  if (tools && msg.includes("quote")) return { kind: "text", chunks: split(`Tools said: ${c.toolResults.join(" | ")}`, 3), delayMs: 0 };
  if (tools) return { kind: "text", chunks: split(`Tools said: ${c.toolResults.length} results`, 3), delayMs: 0 };
  const pause = /\bpause(\d{1,5})\b/.exec(msg);
  if (pause) return { kind: "text", chunks: split(`You said: ${msg}`, 3), delayMs: Math.round(Number(pause[1]) / 3) };
  if (msg.includes("slow")) return { kind: "text", chunks: Array.from({ length: 40 }, (_, i) => `w${i} `), delayMs: 100 };
  return { kind: "text", chunks: split(`You said: ${msg}`, 3), delayMs: 0 };
}
