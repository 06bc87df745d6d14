import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileDurableStore } from "@gw/store";
import { describe, expect, it } from "vitest";
import { StoredResponses } from "./stored-responses.js";

const ID = `resp_${"a".repeat(32)}`;

describe("StoredResponses", () => {
  it("answers a corrupt stored response with INTERNAL naming it, never a crash, and still deletes it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "stored-responses-"));
    const durable = await createFileDurableStore(dir);
    try {
      const kv = await durable.kv("openai-responses");
      const responses = new StoredResponses(kv);
      await responses.save(ID, { sessionKey: "openai:a", agentId: "main", response: { id: ID } });
      expect(await responses.get(ID)).toEqual({ sessionKey: "openai:a", agentId: "main", response: { id: ID } });

      await kv.put(ID, new TextEncoder().encode(JSON.stringify({ sessionKey: "openai:a" })));
      await expect(responses.get(ID)).rejects.toMatchObject({
        code: "INTERNAL",
        message: `stored response ${ID} is corrupt`,
        cause: expect.objectContaining({ message: expect.stringContaining("record.agentId") }),
      });
      await kv.put(ID, new TextEncoder().encode("{not json"));
      await expect(responses.get(ID)).rejects.toMatchObject({ code: "INTERNAL" });

      await responses.delete(ID);
      await expect(responses.get(ID)).rejects.toMatchObject({ code: "NOT_FOUND" });
      await expect(responses.delete(ID)).rejects.toMatchObject({ code: "NOT_FOUND" });
    } finally {
      await durable.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
