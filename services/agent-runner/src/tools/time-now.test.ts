import { isGatewayError } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import { timeNowTool } from "./time-now.js";

const ctx = { signal: new AbortController().signal, agentId: "main", sessionKey: "s" };

describe("time.now", () => {
  it("answers in UTC by default, with ISO and epoch forms of the same instant", async () => {
    const result = await timeNowTool.run({}, ctx);
    expect(result).toMatchObject({ timezone: "UTC", content: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \(UTC\)$/) });
    expect(new Date(result.iso as string).getTime()).toBe(result.epochMs);
  });

  it("answers in a named IANA zone", async () => {
    expect(await timeNowTool.run({ timezone: "Europe/Berlin" }, ctx)).toMatchObject({
      timezone: "Europe/Berlin",
      content: expect.stringMatching(/\(Europe\/Berlin\)$/),
    });
  });

  it("refuses an unknown zone with INVALID_REQUEST naming the param", async () => {
    const err = await timeNowTool.run({ timezone: "Mars/Olympus" }, ctx).catch((e: unknown) => e);
    expect(isGatewayError(err) && err.code).toBe("INVALID_REQUEST");
    expect((err as Error).message).toBe("params.timezone: unknown time zone Mars/Olympus");
  });
});
