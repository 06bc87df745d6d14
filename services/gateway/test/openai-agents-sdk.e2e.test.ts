import { Agent, OpenAIProvider, run, setTracingDisabled, tool } from "@openai/agents";
import { type FakeModelServer, startFakeModelServer } from "@gw/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { RUN_AGENTS, runModels } from "./fixtures/agent-runs.js";
import { type GatewayUnderTest, MODES, startGateway, TOKEN } from "./fixtures/gateway.js";

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
    gw = await startGateway(mode, { agents: RUN_AGENTS, models: runModels(fake) });
  });
  afterAll(async () => {
    await gw?.stop();
    await fake?.close();
  });

  async function weatherAgent(api: "responses" | "chat", cities: string[]): Promise<Agent> {
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
    return new Agent({ name: "Weather", instructions: "Answer with the weather.", model, tools: [getWeather] });
  }

  /** A streamed run, read to its end: the text deltas must add up to the final output. */
  async function streamed(agent: Agent, input: string) {
    const result = await run(agent, input, { stream: true });
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
});
