import { describe, expect, it } from "vitest";
import { assertInHome, inHome, sessionHome } from "./session-scope.js";

describe("session scope", () => {
  it("leaves control and node connections unconfined", () => {
    expect(sessionHome("control", undefined)).toBeUndefined();
    expect(sessionHome("node", "alice")).toBeUndefined();
    expect(inHome(undefined, "telegram:+15550001111")).toBe(true);
  });

  it("confines webchat to its owner's key and threads under it", () => {
    const home = sessionHome("webchat", "alice@example.org")!;
    expect(home).toBe("webchat:alice@example.org");
    expect(inHome(home, "webchat:alice@example.org")).toBe(true);
    expect(inHome(home, "webchat:alice@example.org:trip")).toBe(true);
    for (const key of ["webchat:alice@example.org2", "webchat:bob", "webchat:alice", "main:alice@example.org", "webchat:"]) {
      expect(inHome(home, key), key).toBe(false);
    }
    expect(() => assertInHome(home, "webchat:bob")).toThrow(/only its own sessions/);
  });

  it("gives shared-secret webchat connections the operator's sessions", () => {
    expect(sessionHome("webchat", undefined)).toBe("webchat:operator");
  });

  it("escapes ':' and '%' in owners, so one owner's thread is never another owner's key", () => {
    const home = sessionHome("webchat", "a:b")!;
    expect(home).toBe("webchat:a%3Ab");
    expect(inHome(sessionHome("webchat", "a"), "webchat:a:b")).toBe(true);
    expect(inHome(home, "webchat:a:b")).toBe(false);
    expect(sessionHome("webchat", "50%")).toBe("webchat:50%25");
  });
});
