import { GatewayError } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { type ToolPortFixture, toolPortChecks } from "./tool-port.contract.js";
import type { Tool } from "./tool-registry.js";

/** A tool that behaves: echoes `text`, refuses anything else. */
function echo(overrides: Partial<Tool> = {}): Tool {
  return {
    name: "fake.echo",
    description: "Echoes text.",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    call: async (params) => {
      const text = (params as { text?: unknown }).text;
      if (params === null || typeof params !== "object" || Array.isArray(params) || typeof text !== "string")
        throw new GatewayError("INVALID_REQUEST", "params.text: expected a string");
      return { content: text };
    },
    ...overrides,
  };
}

const fixture = (tool: Tool): (() => ToolPortFixture) => () => ({
  source: { tools: () => [tool] },
  good: { tool: "fake.echo", params: { text: "hello" }, contains: "hello" },
  long: { tool: "fake.echo", params: { text: "long ".repeat(400) } },
  bad: { tool: "fake.echo", params: { text: 1 } },
});

/** The checks that fail for `tool`, by name. */
async function failing(tool: Tool): Promise<string[]> {
  const failed: string[] = [];
  for (const check of toolPortChecks(fixture(tool))) {
    try {
      await check.run();
    } catch {
      failed.push(check.name);
    }
  }
  return failed;
}

describe("the tool port contract itself", () => {
  it("passes a source that keeps it", async () => {
    expect(await failing(echo())).toEqual([]);
  });

  it("fails a source whose names or schemas model APIs refuse", async () => {
    expect(await failing(echo({ name: "fake echo!" }))).toContainEqual(expect.stringMatching(/^names every tool/));
    expect(await failing(echo({ parameters: { type: "string" } }))).toContainEqual(expect.stringMatching(/^names every tool/));
    expect(await failing(echo({ parameters: { $schema: "x", type: "object" } }))).toContainEqual(expect.stringMatching(/^names every tool/));
  });

  it("fails a source that accepts bad params or fails them with something other than INVALID_REQUEST", async () => {
    expect(await failing(echo({ call: async (p) => ({ content: JSON.stringify(p) }) }))).toContainEqual(expect.stringMatching(/^refuses bad params/));
    const crash = echo({
      call: async (p) => {
        if (typeof (p as { text?: unknown }).text !== "string") throw new Error("boom");
        return { content: "ok hello" };
      },
    });
    expect(await failing(crash)).toContainEqual(expect.stringMatching(/^refuses bad params/));
  });

  it("fails a source whose results are not text", async () => {
    expect(await failing(echo({ call: async () => ({ content: 42 as unknown as string }) }))).toContainEqual(expect.stringMatching(/^runs a good call/));
  });
});
