import { createSubjects, InProcessBus } from "@gw/bus";
import { createLogger } from "@gw/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { CREDENTIAL_CHANGED_CLOSE, DeviceLinks } from "./device-links.js";

const subjects = createSubjects("gw");
const logger = createLogger({ service: "test", level: "silent" });

function socket(id: string) {
  const closes: Array<[number, string]> = [];
  return { id, closes, close: (code: number, reason: string) => void closes.push([code, reason]) };
}

describe("device links between edges", () => {
  const bus = new InProcessBus();
  const a = new DeviceLinks({ bus, subjects, edgeId: "a", logger });
  const b = new DeviceLinks({ bus, subjects, edgeId: "b", logger });
  afterEach(async () => {
    await bus.flush();
  });

  it("closes every socket of a rotated token on every edge, and none of the new one", async () => {
    const [onA, onB, fresh] = [socket("s1"), socket("s2"), socket("s3")];
    expect(a.attach(onA, "dev", "old")).toBe(true);
    expect(b.attach(onB, "dev", "old")).toBe(true);
    expect(b.attach(fresh, "dev", "new")).toBe(true);
    await a.announce("dev", "new");
    await bus.flush();
    expect(onA.closes).toEqual([[CREDENTIAL_CHANGED_CLOSE, "device token rotated"]]);
    expect(onB.closes).toEqual([[CREDENTIAL_CHANGED_CLOSE, "device token rotated"]]);
    expect(fresh.closes).toEqual([]);
    await b.announce("dev", "");
    await bus.flush();
    expect(fresh.closes).toEqual([[CREDENTIAL_CHANGED_CLOSE, "device revoked"]]);
  });

  it("keeps the asking socket on its new token", async () => {
    const asker = socket("s4");
    a.attach(asker, "dev2", "t1");
    a.rebind("s4", "dev2", "t2");
    await a.announce("dev2", "t2");
    expect(asker.closes).toEqual([]);
  });

  it("asks for a second look at a socket registering against a change it heard", async () => {
    await a.announce("dev3", "t9");
    await bus.flush();
    expect(b.attach(socket("s5"), "dev3", "t8")).toBe(false);
    expect(b.attach(socket("s6"), "dev3", "t9")).toBe(true);
    expect(b.attach(socket("s7"), "dev4", "any")).toBe(true);
  });

  it("hands a pairing result to the waiting socket on its edge, once", async () => {
    const results: unknown[] = [];
    const stop = b.awaitResult("conn-9", (result) => results.push(result));
    const resolution = { requestId: "r1", connId: "conn-9", deviceId: "dev5", status: "approved", token: "gwd1.x" };
    expect(await a.deliver("b", resolution)).toBe(true);
    expect(results).toEqual([{ requestId: "r1", deviceId: "dev5", status: "approved", token: "gwd1.x" }]);
    expect(await a.deliver("b", resolution)).toBe(false);
    stop();
    b.awaitResult("conn-10", (result) => results.push(result));
    expect(await a.deliver("b", { ...resolution, connId: "conn-10", status: "rejected", token: "" })).toBe(true);
    expect(results[1]).toEqual({ requestId: "r1", deviceId: "dev5", status: "rejected" });
    // An edge that is not there: no responder, so not delivered.
    expect(await a.deliver("gone", resolution)).toBe(false);
  });
});
