import { createSubjects, InProcessBus } from "@gw/bus";
import { isGatewayError } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { builtinTools } from "./builtin-tools.js";
import { defineTool, type ToolDefinition, ToolRegistry, toWireName } from "./tool-registry.js";

const echo = defineTool({
  name: "test.echo",
  description: "Echoes its input.",
  input: z.object({
    text: z.string().min(1),
    times: z.number().int().positive().optional(),
    options: z.object({ loud: z.boolean() }).optional(),
  }),
  run: async ({ text, times }) => ({ content: text.repeat(times ?? 1) }),
});

const registry = new ToolRegistry([
  ...builtinTools({
    config: { httpFetch: { allowHosts: [], allowPrivateNetworks: false, maxBytes: 1_000, timeoutMs: 1_000 } },
    sessions: { bus: new InProcessBus(), subjects: createSubjects("test"), timeoutMs: 1_000 },
    delivery: { bus: new InProcessBus(), subjects: createSubjects("test"), timeoutMs: 1_000 },
  }),
  echo,
] as ToolDefinition[]);
const ctx = { signal: new AbortController().signal, agentId: "main", sessionKey: "s" };

async function invalid(name: string, params: unknown): Promise<string> {
  const err = await registry.invoke(name, params, ctx).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isGatewayError(err) || err.code !== "INVALID_REQUEST") throw new Error(`expected INVALID_REQUEST, got ${String(err)}`);
  return err.message;
}

describe("ToolRegistry", () => {
  it("lists every registered tool, sorted", () => {
    expect(registry.names()).toEqual(["http.fetch", "message.send", "sessions.list", "sessions.preview", "test.echo", "time.now"]);
  });

  it("validates params and hands the tool typed input", async () => {
    expect(await registry.invoke("test.echo", { text: "ab", times: 2 }, ctx)).toEqual({ content: "abab" });
  });

  it("refuses an unknown tool by name", async () => {
    expect(await invalid("no.such.tool", {})).toBe("unknown tool: no.such.tool");
  });

  it("names the exact param path and reason in validation messages", async () => {
    expect(await invalid("test.echo", {})).toMatch(/^params\.text: /);
    expect(await invalid("test.echo", { text: "" })).toMatch(/^params\.text: .*>=1 characters/);
    expect(await invalid("test.echo", { text: "a", times: 1.5 })).toMatch(/^params\.times: .*int/);
    expect(await invalid("test.echo", { text: "a", options: { loud: "yes" } })).toMatch(/^params\.options\.loud: .*boolean/);
    expect(await invalid("test.echo", "just a string")).toMatch(/^params: .*object/);
    expect(await invalid("time.now", { timezone: 42 })).toMatch(/^params\.timezone: /);
    expect(await invalid("http.fetch", { url: "ftp://example.com/" })).toBe("params.url: expected an http(s) URL");
  });

  it("reports several problems at once, separated by semicolons", async () => {
    const message = await invalid("test.echo", { text: 1, times: "x" });
    expect(message.split("; ").sort()).toEqual([expect.stringMatching(/^params\.text: /), expect.stringMatching(/^params\.times: /)]);
  });

  it("treats missing params as an empty object", async () => {
    expect(await registry.invoke("time.now", undefined, ctx)).toMatchObject({ timezone: "UTC" });
    expect(await registry.invoke("time.now", null, ctx)).toMatchObject({ timezone: "UTC" });
  });
});

describe("per-agent allow list", () => {
  it("publishes only allowed, existing tools, under wire names, as JSON Schema", () => {
    const specs = registry.specs(["test.echo", "not.registered"]);
    expect(specs).toHaveLength(1);
    expect(specs[0]).toMatchObject({
      name: "test__echo",
      description: "Echoes its input.",
      parameters: { type: "object", required: ["text"], properties: { text: { type: "string", minLength: 1 } } },
    });
    expect(specs[0]!.parameters).not.toHaveProperty("$schema");
    expect(registry.specs([])).toEqual([]);
  });

  it("resolves a model's call by wire name only when the agent may use the tool", () => {
    expect(registry.fromWire("time__now", ["time.now"])?.name).toBe("time.now");
    expect(registry.fromWire("time__now", ["http.fetch"])).toBeUndefined();
    expect(registry.fromWire("time.now", ["time.now"]), "dotted names are not wire names").toBeUndefined();
    expect(registry.fromWire("no__such", ["no.such"])).toBeUndefined();
  });

  it("turns dots into double underscores, which both model APIs accept", () => {
    expect(toWireName("sessions.list.recent")).toBe("sessions__list__recent");
    expect(toWireName("plain")).toBe("plain");
  });
});
