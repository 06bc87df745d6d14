import { describe, expect, it } from "vitest";
import { SubjectRegistry } from "./subject-registry.js";

const names = (registry: SubjectRegistry<string>, subject: string) => registry.targets(subject).map((r) => r.handler);

describe("SubjectRegistry", () => {
  it("finds literal and wildcard registrations, in the order they were made", () => {
    const registry = new SubjectRegistry<string>();
    registry.add({ pattern: "gw.run.>", queue: undefined, handler: "all runs" });
    registry.add({ pattern: "gw.run.a.life", queue: undefined, handler: "a literal" });
    registry.add({ pattern: "gw.run.*.life", queue: undefined, handler: "every life" });
    registry.add({ pattern: "gw.run.*", queue: undefined, handler: "one token" });
    expect(names(registry, "gw.run.a.life")).toEqual(["all runs", "a literal", "every life"]);
    expect(names(registry, "gw.run.b.life")).toEqual(["all runs", "every life"]);
    expect(names(registry, "gw.run.b")).toEqual(["all runs", "one token"]);
    expect(names(registry, "gw.run")).toEqual([]);
  });

  it("sees registrations made and removed after a subject was resolved", () => {
    const registry = new SubjectRegistry<string>();
    const wild = registry.add({ pattern: "gw.x.*", queue: undefined, handler: "wild" });
    expect(names(registry, "gw.x.y")).toEqual(["wild"]);
    const literal = registry.add({ pattern: "gw.x.y", queue: undefined, handler: "literal" });
    const other = registry.add({ pattern: "gw.x.z", queue: undefined, handler: "other" });
    expect(names(registry, "gw.x.y")).toEqual(["wild", "literal"]);
    expect(names(registry, "gw.x.z")).toEqual(["wild", "other"]);
    literal();
    literal();
    expect(names(registry, "gw.x.y")).toEqual(["wild"]);
    expect(names(registry, "gw.x.z")).toEqual(["wild", "other"]);
    wild();
    expect(names(registry, "gw.x.y")).toEqual([]);
    expect(names(registry, "gw.x.z")).toEqual(["other"]);
    other();
    expect(names(registry, "gw.x.z")).toEqual([]);
  });

  it("gives each queue group one member in turn, beside every plain registration", () => {
    const registry = new SubjectRegistry<string>();
    registry.add({ pattern: "gw.rpc.runner.agents.list", queue: "runner", handler: "r1" });
    registry.add({ pattern: "gw.rpc.runner.*", queue: undefined, handler: "tap" });
    registry.add({ pattern: "gw.rpc.runner.>", queue: "runner", handler: "r2" });
    const subject = "gw.rpc.runner.agents.list";
    expect([names(registry, subject), names(registry, subject), names(registry, subject)]).toEqual([
      ["r1"],
      ["r2"],
      ["r1"],
    ]);
    expect(names(registry, "gw.rpc.runner.x")).toEqual(["tap", expect.stringMatching(/^r2$/)]);
  });

  it("keeps two literal registrations of one subject apart", () => {
    const registry = new SubjectRegistry<string>();
    const first = registry.add({ pattern: "gw.a", queue: undefined, handler: "first" });
    registry.add({ pattern: "gw.a", queue: undefined, handler: "second" });
    expect(names(registry, "gw.a")).toEqual(["first", "second"]);
    first();
    expect(names(registry, "gw.a")).toEqual(["second"]);
  });
});
