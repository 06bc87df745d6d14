import { describe, expect, it } from "vitest";
import { WS_EVENTS, WS_METHODS } from "../api-docs/ws-catalogue.js";
import {
  EVENT_FAMILIES,
  eventFamily,
  forbiddenMethodMessage,
  mayCall,
  mayReceive,
  methodsFor,
  PERMISSIONS,
  rolesFor,
} from "./permissions.js";

const documented = WS_METHODS.map((m) => m.name).filter((name) => name !== "connect");

describe("the permission table", () => {
  it("names only methods the edge serves (no typo grants nothing silently)", () => {
    for (const [access, grant] of Object.entries(PERMISSIONS)) {
      if (grant.methods === "all") continue;
      for (const method of grant.methods) expect(documented, `${access}: ${method}`).toContain(method);
    }
  });

  it("gives control every method and every event family", () => {
    for (const method of documented) expect(mayCall("control", method), method).toBe(true);
    for (const family of EVENT_FAMILIES) expect(mayReceive("control", family), family).toBe(true);
  });

  it("keeps administration, delivery and session changes to control", () => {
    const controlOnly = [
      "sessions.list",
      "sessions.patch",
      "sessions.reset",
      "sessions.delete",
      "sessions.compact",
      "send",
      "poll",
      "channels.status",
      "node.pair.list",
      "node.pair.approve",
      "node.pair.reject",
      "device.list",
      "device.revoke",
    ];
    for (const method of controlOnly) expect(rolesFor(method), method).toEqual(["control"]);
    expect(rolesFor("device.token.rotate")).toEqual(["control", "node"]);
    expect(rolesFor("node.pair.request")).toEqual(["control", "node"]);
    expect(rolesFor("agent")).toEqual(["control", "node", "webchat"]);
  });

  it("lets a pairing connection ask to be paired and nothing else", () => {
    expect(methodsFor("pairing", documented)).toEqual(["node.pair.request"]);
    expect(EVENT_FAMILIES.filter((f) => mayReceive("pairing", f))).toEqual(["pairing.result", "connection"]);
    expect(forbiddenMethodMessage("pairing", "agents.list")).toMatch(/only call node\.pair\.request/);
  });

  it("filters events per family: pairing and device news only to control", () => {
    expect(EVENT_FAMILIES.filter((f) => mayReceive("node", f))).toEqual(["agent", "session", "pairing.result", "connection"]);
    expect(EVENT_FAMILIES.filter((f) => mayReceive("webchat", f))).toEqual(["agent", "session", "connection"]);
  });

  it("puts every documented event in a family, and refuses to guess one", () => {
    expect(WS_EVENTS.map((e) => [e.event, eventFamily(e.event)])).toEqual([
      ["agent", "agent"],
      ["session.created", "session"],
      ["session.updated", "session"],
      ["node.pair.requested", "pairing"],
      ["node.pair.resolved", "pairing"],
      ["node.pair.result", "pairing.result"],
      ["device.token.rotated", "device"],
      ["device.revoked", "device"],
      ["shutdown", "connection"],
    ]);
    expect(() => eventFamily("mystery")).toThrow(/no family/);
  });

  it("words a refusal with what the role may do", () => {
    expect(forbiddenMethodMessage("webchat", "sessions.list")).toMatch(/^method sessions\.list is not allowed for role webchat \(it may call agents\.list, /);
  });
});
