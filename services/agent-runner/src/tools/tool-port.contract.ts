import { isGatewayError } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { type ToolContext, ToolRegistry, type ToolSource, toWireName } from "./tool-registry.js";

/** What a tool source under the contract offers for it to call. */
export interface ToolPortFixture {
  source: ToolSource;
  /** A call that must succeed, and a piece of text its result's content must hold. */
  good: { tool: string; params: Record<string, unknown>; contains: string };
  /** A call whose result's content is longer than 1 KiB. */
  long: { tool: string; params: Record<string, unknown> };
  /** A call whose params the tool must refuse. */
  bad: { tool: string; params: Record<string, unknown> };
}

const ctx = (): ToolContext => ({ signal: AbortSignal.timeout(20_000), agentId: "main", sessionKey: "contract" });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (err: unknown) => err,
  );
}

/** One check of the contract: throws (an expect failing) when the source breaks it. */
export interface ToolPortCheck {
  name: string;
  run(): Promise<void> | void;
}

/**
 * The tool port (DESIGN §11): every source of tools, built in or an MCP server, behaves the same
 * through the registry. `fixture` is read when a check runs, after the caller's beforeAll.
 */
export function toolPortChecks(fixture: () => ToolPortFixture): ToolPortCheck[] {
  const registry = () => new ToolRegistry([fixture().source]);
  const checks: ToolPortCheck[] = [];
  const check = (name: string, run: () => Promise<void> | void) => checks.push({ name, run });

  check("names every tool <source>.<tool>, a valid function name on the wire, with an object JSON Schema", () => {
    const { source } = fixture();
    expect(source.tools().length).toBeGreaterThan(0);
    for (const tool of source.tools()) {
      expect(tool.name).toMatch(/^[a-z0-9][a-z0-9_-]*\.[^.]/);
      expect(toWireName(tool.name)).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      expect(typeof tool.description).toBe("string");
      expect(tool.parameters).toMatchObject({ type: "object" });
      expect(tool.parameters).not.toHaveProperty("$schema");
    }
  });

  check("runs a good call to a result whose content is the text the model reads", async () => {
    const { good } = fixture();
    const result = await registry().invoke(good.tool, good.params, ctx());
    expect(typeof result.content).toBe("string");
    expect(result.content).toContain(good.contains);
  });

  check("refuses bad params and params that are not an object as INVALID_REQUEST, with a message", async () => {
    const { bad } = fixture();
    for (const params of [bad.params, [1, 2], "text"]) {
      const err = await failure(registry().invoke(bad.tool, params, ctx()));
      expect(isGatewayError(err) && err.code === "INVALID_REQUEST").toBe(true);
      expect((err as Error).message.length).toBeGreaterThan(0);
    }
  });

  check("cuts a result above the bound, with a note the model reads", async () => {
    const { long } = fixture();
    const whole = await registry().invoke(long.tool, long.params, ctx());
    expect(whole.content.length).toBeGreaterThan(1_024);
    const tight = new ToolRegistry([{ tools: () => fixture().source.tools().map(({ maxResultBytes: _m, ...t }) => t) }], { maxResultBytes: 400 });
    const result = await tight.invoke(long.tool, long.params, ctx());
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(400);
    expect(result.content.startsWith(whole.content.slice(0, 100))).toBe(true);
    expect(result.content).toContain("[truncated by the gateway");
  });

  check("offers its tools to an agent that names them exactly or as <source>.*, and no others", () => {
    const { good, source } = fixture();
    const prefix = good.tool.split(".")[0]!;
    const reg = registry();
    expect(reg.specs([good.tool]).map((s) => s.name)).toEqual([toWireName(good.tool)]);
    expect(reg.specs([`${prefix}.*`]).length).toBe(source.tools().filter((t) => t.name.startsWith(`${prefix}.`)).length);
    expect(reg.specs(["other.*"])).toEqual([]);
    expect(reg.fromWire(toWireName(good.tool), [`${prefix}.*`])?.name).toBe(good.tool);
    expect(reg.fromWire(toWireName(good.tool), ["other.*"])).toBeUndefined();
  });
  return checks;
}

/** The contract as tests, for a source's test file. */
export function toolPortContract(name: string, fixture: () => ToolPortFixture): void {
  describe(`tool port contract: ${name}`, () => {
    for (const check of toolPortChecks(fixture)) it(check.name, () => check.run());
  });
}
