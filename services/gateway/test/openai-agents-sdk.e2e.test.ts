import { Agent, OpenAIProvider, run, setTracingDisabled, tool } from "@openai/agents";
import { type FakeModelServer, freePort, startFakeModelServer } from "@gw/testing";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { RUN_AGENTS, runModels } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";
import { type ServiceProcess, spawnService, waitHealthy } from "./fixtures/processes.js";

// The SDK exports traces to api.openai.com by default: no traffic beyond this machine.
setTracingDisabled(true);

/** The OpenAI Agents SDK (`@openai/agents`), unmodified, with a local function tool. */
describe.each(MODES)("OpenAI Agents SDK (%s)", (mode) => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  /** The SDK's own provider (it builds its own OpenAI client) on the gateway's /v1. */
  const provider = (api: "responses" | "chat") => new OpenAIProvider({ apiKey: TOKEN, baseURL: `${gw.httpUrl()}/v1`, useResponses: api === "responses" });

  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway(mode, { edges: 2, agents: RUN_AGENTS, models: runModels(fake) });
  });
  afterAll(async () => {
    await gw?.stop();
    await fake?.close();
  });

  async function weatherAgent(api: "responses" | "chat", cities: string[], store = false): Promise<Agent> {
    const getWeather = tool({
      name: "get_weather",
      description: "The weather in a city",
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => {
        cities.push(city);
        return `Sunny in ${city}`;
      },
    });
    const model = await provider(api).getModel("oa");
    expect(model.constructor.name).toBe(api === "responses" ? "OpenAIResponsesModel" : "OpenAIChatCompletionsModel");
    return new Agent({ name: "Weather", instructions: "Answer with the weather.", model, tools: [getWeather], ...(store ? { modelSettings: { store } } : {}) });
  }

  /** A streamed run, read to its end: the text deltas must add up to the final output. */
  async function streamed(agent: Agent, input: string, previousResponseId?: string) {
    const result = await run(agent, input, { stream: true, ...(previousResponseId ? { previousResponseId } : {}) });
    let text = "";
    for await (const event of result) {
      if (event.type === "raw_model_stream_event" && event.data.type === "output_text_delta") text += event.data.delta;
    }
    await result.completed;
    expect(text).toBe(result.finalOutput);
    return result;
  }

  /** The upstream requests of one conversation, by a marker in its user message. */
  const seen = (marker: string) => fake.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker));

  for (const api of ["responses", "chat"] as const) {
    it(`runs an agent with a local function tool over ${api}, streaming and not`, async () => {
      for (const stream of [false, true]) {
        const marker = `sdk ${api} ${stream} tools:get_weather`;
        const cities: string[] = [];
        const agent = await weatherAgent(api, cities);
        const result = stream ? await streamed(agent, marker) : await run(agent, marker);
        expect(result.finalOutput).toBe("Tools said: 1 results");
        expect(cities).toEqual(["Paris"]);
        const upstream = seen(marker);
        // The SDK ran the tool; its result went back through the gateway to the model.
        expect(JSON.stringify(upstream.at(-1)!.body.messages)).toContain("Sunny in Paris");
        expect(JSON.stringify(upstream[0]!.body.messages)).toContain("Answer with the weather.");
      }
    });
  }
  it("continues a stored conversation with previousResponseId, through a local tool call, streaming and not", async () => {
    for (const stream of [false, true]) {
      const cities: string[] = [];
      const agent = await weatherAgent("responses", cities, true);
      const first = `remember ${mode} ${stream}`;
      const opened = stream ? await streamed(agent, first) : await run(agent, first);
      expect(opened.finalOutput).toBe(`You said: ${first}`);
      expect(opened.lastResponseId).toMatch(/^resp_/);
      const marker = `weather now ${mode} ${stream} tools:get_weather`;
      const next = stream
        ? await streamed(agent, marker, opened.lastResponseId)
        : await run(agent, marker, { previousResponseId: opened.lastResponseId });
      expect(next.finalOutput).toBe("Tools said: 1 results");
      expect(cities).toEqual(["Paris"]);
      // The model saw the first exchange, which the SDK did not send again: the session held it.
      const upstream = seen(marker);
      const last = JSON.stringify(upstream.at(-1)!.body.messages);
      expect(last).toContain(`You said: ${first}`);
      expect(last).toContain("Sunny in Paris");
      expect(next.lastResponseId).not.toBe(opened.lastResponseId);
    }
  });

  it("stored responses: GET and DELETE /v1/responses/{id} on any edge; only the latest is continued", async () => {
    const [a, b] = [new OpenAI({ apiKey: TOKEN, baseURL: `${gw.httpUrl(0)}/v1`, maxRetries: 0 }), new OpenAI({ apiKey: TOKEN, baseURL: `${gw.httpUrl(gw.edges.length - 1)}/v1`, maxRetries: 0 })];
    const first = await a.responses.create({
      model: "oa",
      input: `stored one ${mode}`,
      store: true,
      metadata: { t: "1" },
      prompt_cache_key: "cache-1",
      safety_identifier: "user-1",
    });
    // The hints an OpenAI provider honours reach it; the labels stay in the gateway.
    expect(seen(`stored one ${mode}`)[0]!.body).toMatchObject({ prompt_cache_key: "cache-1", safety_identifier: "user-1" });
    expect(seen(`stored one ${mode}`)[0]!.body).not.toHaveProperty("metadata");
    expect(first).toMatchObject({ store: true, status: "completed", output_text: `You said: stored one ${mode}` });
    expect(await b.responses.retrieve(first.id)).toMatchObject({ id: first.id, store: true, metadata: { t: "1" }, output: first.output });
    const second = await b.responses.create({ model: "oa", input: `stored two ${mode}`, previous_response_id: first.id });
    expect(second).toMatchObject({ store: true, previous_response_id: first.id });
    expect(JSON.stringify(seen(`stored two ${mode}`).at(-1)!.body.messages)).toContain(`stored one ${mode}`);
    // A conversation has one line: the first response is no longer its end.
    await expect(a.responses.create({ model: "oa", input: "fork", previous_response_id: first.id })).rejects.toMatchObject({ status: 409 });
    await a.responses.delete(second.id);
    await expect(b.responses.retrieve(second.id)).rejects.toMatchObject({ status: 404 });
    await expect(a.responses.create({ model: "oa", input: "gone", previous_response_id: second.id })).rejects.toMatchObject({
      status: 404,
      error: { param: "previous_response_id" },
    });
    // Not stored: nothing to read back.
    const plain = await a.responses.create({ model: "oa", input: "not kept" });
    expect(plain).toMatchObject({ store: false });
    await expect(a.responses.retrieve(plain.id)).rejects.toMatchObject({ status: 404 });
  });
});

/** A stored response outlives its gateway: the id still reads and continues after a restart. */
describe("stored responses across a restart (embedded: files)", () => {
  let gw: GatewayUnderTest;
  let fake: FakeModelServer;
  let restarted: ServiceProcess | undefined;
  beforeAll(async () => {
    fake = await startFakeModelServer();
    gw = await startGateway("embedded", { agents: RUN_AGENTS, models: runModels(fake) });
  });
  afterAll(async () => {
    await restarted?.stop();
    await gw?.stop();
    await fake?.close();
  });

  it("reads and continues a response stored before the restart", async () => {
    const before = new OpenAI({ apiKey: TOKEN, baseURL: `${gw.httpUrl()}/v1`, maxRetries: 0 });
    const first = await before.responses.create({ model: "oa", input: "kept across restarts", store: true });
    await gw.edges[0]!.proc.stop();
    const port = await freePort();
    restarted = spawnService("gateway-2", "services/gateway/src/cli.ts", ["start", "--config", gw.configPath, "--port", String(port)], {
      E2E_GATEWAY_TOKEN: TOKEN,
    });
    await waitHealthy(restarted, `http://127.0.0.1:${port}`);
    const after = new OpenAI({ apiKey: TOKEN, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    expect(await after.responses.retrieve(first.id)).toMatchObject({ id: first.id, output_text: "You said: kept across restarts" });
    const next = await after.responses.create({ model: "oa", input: "and after", previous_response_id: first.id });
    expect(next.output_text).toBe("You said: and after");
    const upstream = fake.requests.filter((r) => JSON.stringify(r.body.messages).includes("and after"));
    expect(JSON.stringify(upstream.at(-1)!.body.messages)).toContain("You said: kept across restarts");
  });
});
