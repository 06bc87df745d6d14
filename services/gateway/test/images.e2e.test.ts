import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { WsClient } from "./fixtures/ws-client.js";

/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const PNG_BYTES = Buffer.from(PNG, "base64").byteLength;
const DATA_URL = `data:image/png;base64,${PNG}`;
const HTTPS_URL = "https://images.example.com/cat.jpg";

const AGENTS = [
  { id: "main", name: "Main", model: "builtin/echo" },
  { id: "eyes", name: "Vision (OpenAI)", model: "vision-openai/gpt-vision" },
  { id: "claude", name: "Vision (Anthropic)", model: "vision-anthropic/claude-vision" },
  { id: "blind", name: "Text only", model: "text-openai/gpt-text" },
];

function models(fake: FakeModelServer) {
  const common = { baseUrl: fake.baseUrl, apiKey: "sk-fake", timeoutMs: 5_000 };
  return {
    providers: {
      "vision-openai": { kind: "openai", ...common, input: ["text", "image"] },
      "vision-anthropic": { kind: "anthropic", ...common, models: { "claude-vision": { input: ["text", "image"] } } },
      "text-openai": { kind: "openai", ...common },
    },
  };
}

/** The last request the fake model saw whose messages mention `marker`. */
function upstream(fake: FakeModelServer, marker: string) {
  const seen = fake.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker));
  expect(seen.length).toBeGreaterThan(0);
  return seen.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
}

const imageParts = [
  { type: "image_url" as const, image_url: { url: DATA_URL } },
  { type: "image_url" as const, image_url: { url: HTTPS_URL } },
];

/**
 * Images in (docs/protocol.md `attachments`): OpenAI image content parts and the `agent` RPC's
 * attachments reach the model provider in its own format, are kept with the session's message
 * (sessions.preview shows them), and a model without image input is refused naming the image.
 */
describe.each(MODES)("images in (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  let client: WsClient;
  const sdk = () => new OpenAI({ apiKey: TOKEN, baseURL: `${gw.httpUrl()}/v1`, maxRetries: 0, timeout: 30_000 });

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway(mode, { agents: AGENTS, models: models(fake) });
    client = await WsClient.open(gw.wsUrl());
    expect((await client.connect(TOKEN)).ok).toBe(true);
  }, 120_000);
  afterAll(async () => {
    client?.close();
    await gw?.stop();
    await fake?.close();
  });

  it("openai SDK: image parts reach an OpenAI-kind provider as image_url parts", async () => {
    const marker = `what is in these ${mode}`;
    const answer = await sdk().chat.completions.create({ model: "eyes", messages: [{ role: "user", content: [{ type: "text", text: marker }, ...imageParts] }] });
    expect(answer.choices[0]?.message.content).toBe(`You said: ${marker}`);
    const user = upstream(fake, marker).messages.find((m) => m.role === "user")!;
    expect(user.content).toEqual([
      { type: "text", text: marker },
      { type: "image_url", image_url: { url: DATA_URL } },
      { type: "image_url", image_url: { url: HTTPS_URL } },
    ]);
  });

  it("openai SDK: image parts reach an Anthropic-kind provider as image blocks (base64 and url sources)", async () => {
    const marker = `describe for claude ${mode}`;
    const answer = await sdk().chat.completions.create({ model: "claude", messages: [{ role: "user", content: [{ type: "text", text: marker }, ...imageParts] }] });
    expect(answer.choices[0]?.message.content).toBe(`You said: ${marker}`);
    const user = upstream(fake, marker).messages.find((m) => m.role === "user")!;
    expect(user.content).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      { type: "image", source: { type: "url", url: HTTPS_URL } },
      { type: "text", text: marker },
    ]);
  });

  it("openai SDK: a Responses input_image is kept with the session's message, and a later turn still shows it to the model", async () => {
    const user = `viewer-${mode}`;
    const first = await sdk().responses.create({
      model: "eyes",
      user,
      input: [{ role: "user", content: [{ type: "input_text", text: `first look ${mode}` }, { type: "input_image", image_url: DATA_URL, detail: "auto" }] }],
    });
    expect(first.output_text).toBe(`You said: first look ${mode}`);
    await sdk().responses.create({ model: "eyes", user, input: `second look ${mode}` });
    // The session replays the first turn with its image.
    const replay = upstream(fake, `second look ${mode}`).messages.filter((m) => m.role === "user");
    expect(replay[0]!.content).toEqual([{ type: "text", text: `first look ${mode}` }, { type: "image_url", image_url: { url: DATA_URL } }]);
    const preview = await send(client, "sessions.preview", { key: `openai:${user}` });
    const messages = (preview.payload as { messages: Array<{ role: string; body: string; attachments?: unknown }> }).messages;
    const withImage = messages.find((m) => m.body === `first look ${mode}`)!;
    expect(withImage.attachments).toEqual([{ type: "image", mimeType: "image/png", size: PNG_BYTES }]);
    expect(messages.find((m) => m.body === `second look ${mode}`)?.attachments).toBeUndefined();
  });

  it("openai SDK: a model without image input is refused with a 400 naming the image part; nothing reaches the model", async () => {
    const marker = `blind look ${mode}`;
    const before = fake.requests.length;
    const refused = await sdk()
      .chat.completions.create({ model: "blind", messages: [{ role: "user", content: [{ type: "text", text: marker }, imageParts[0]!] }] })
      .then(() => undefined, (err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(refused).toMatchObject({ status: 400, param: "messages[0].content[1]", message: expect.stringContaining("text-openai/gpt-text") });
    expect(fake.requests.length).toBe(before);
  });

  it("agent RPC: attachments reach builtin/echo, which describes them, and the preview shows them", async () => {
    const key = `images:${mode}`;
    const attachments = [
      { type: "image", mimeType: "image/png", data: PNG },
      { type: "image", mimeType: "image/jpeg", url: HTTPS_URL },
    ];
    const answer = await send(client, "agent", { message: "look", sessionKey: key, attachments });
    expect(answer.ok).toBe(true);
    const text = (answer.payload as { payloads: Array<{ text: string }> }).payloads[0]!.text;
    expect(text).toBe(`look\n[image: image/png, ${PNG_BYTES} bytes]\n[image: image/jpeg, ${HTTPS_URL}]`);
    const preview = await send(client, "sessions.preview", { key });
    const user = (preview.payload as { messages: Array<{ role: string; attachments?: unknown }> }).messages.find((m) => m.role === "user");
    expect(user?.attachments).toEqual([
      { type: "image", mimeType: "image/png", size: PNG_BYTES },
      { type: "image", mimeType: "image/jpeg", url: HTTPS_URL },
    ]);
  });

  it.each([
    [[{ type: "video", mimeType: "image/png", data: PNG }], "attachments.0.type"],
    [[{ type: "image", mimeType: "image/tiff", data: PNG }], "attachments.0.mimeType"],
    [[{ type: "image", mimeType: "image/png", url: "http://example.com/a.png" }], "attachments.0.url"],
    [[{ type: "image", mimeType: "image/png", url: "file:///etc/passwd" }], "attachments.0.url"],
    [[{ type: "image", mimeType: "image/png" }], "attachments.0.url"],
    [[{ type: "image", mimeType: "image/png", data: "not base64!" }], "attachments.0.data"],
  ])("agent RPC: refuses attachments %j naming %s, and starts no run", async (attachments, path) => {
    const key = `images-bad:${mode}`;
    const answer = await send(client, "agent", { message: "x", sessionKey: key, attachments });
    expect(answer.ok).toBe(false);
    expect(answer.error).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringContaining(path) });
    const preview = await send(client, "sessions.preview", { key });
    expect((preview.payload as { messages?: unknown[] } | undefined)?.messages ?? []).toEqual([]);
  });

  it("agent RPC: images to an agent without image input are refused naming attachments", async () => {
    const answer = await send(client, "agent", { message: "x", sessionKey: `images-blind:${mode}`, agentId: "blind", attachments: [{ type: "image", mimeType: "image/png", data: PNG }] });
    expect(answer.ok).toBe(false);
    expect(answer.error).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringContaining("text-openai/gpt-text") });
  });
});
