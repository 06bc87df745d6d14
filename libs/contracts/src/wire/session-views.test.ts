import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../gen/gateway/v1/sessions.pb.js";
import { sessionMessageView } from "./session-views.js";

const entry = (role: string, sender: string): SessionEntry => ({
  id: "e1",
  parentId: "",
  role,
  sender,
  body: "hi",
  timestamp: 1,
  runId: "r1",
  kind: "message",
  metaJson: Buffer.alloc(0),
});

const senderOf = (role: string, sender: string) => sessionMessageView(entry(role, sender), "ops").sender;

describe("sessionMessageView sender", () => {
  it("is the stored display name", () => {
    expect(senderOf("assistant", "Ops desk")).toBe("Ops desk");
    expect(senderOf("user", "Ada")).toBe("Ada");
    expect(senderOf("tool", "time.now")).toBe("time.now");
  });

  it("is the agent id for an assistant turn without a name, or with the literal 'assistant' older runners stored", () => {
    expect(senderOf("assistant", "")).toBe("ops");
    expect(senderOf("assistant", "assistant")).toBe("ops");
  });

  it("is the role for other turns without a name", () => {
    expect(senderOf("user", "")).toBe("user");
    expect(senderOf("system", "")).toBe("system");
  });
});
