import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSubjects, InProcessBus } from "@gw/bus";
import { parseConfig } from "@gw/config";
import { createLogger } from "@gw/runtime";
import { InProcessRunQueue, RunRegistry } from "@gw/runs";
import { createFileDurableStore, createMemoryFastStore } from "@gw/store";
import { describe, expect, it } from "vitest";
import { CHANNEL_PLUGINS } from "../channels/index.js";
import { HttpClients } from "../http-clients.js";
import { startDeliveryService } from "../service.js";

describe("the inbound side's start", () => {
  it("refuses a channel whose agent is not configured, naming the key", async () => {
    const config = parseConfig(
      `{ agents: { default: "main", list: [{ id: "main", name: "Main", model: "builtin/echo" }] },
         channels: { tg: { kind: "telegram", botToken: "1:a", webhookSecret: "s", agent: "ghost" } } }`,
      { env: {} },
    );
    const bus = new InProcessBus();
    const fastStore = createMemoryFastStore();
    const durable = await createFileDurableStore(mkdtempSync(join(tmpdir(), "inbound-service-")));
    const http = new HttpClients();
    try {
      await expect(
        startDeliveryService({
          config,
          bus,
          subjects: createSubjects("t"),
          fastStore,
          durable,
          plugins: CHANNEL_PLUGINS,
          runs: { queue: new InProcessRunQueue(), registry: new RunRegistry(fastStore) },
          http: http.factory,
          logger: createLogger({ service: "test", level: "silent" }),
        }),
      ).rejects.toThrow(/channels\.tg\.agent: names agent "ghost", which is not in agents\.list/);
    } finally {
      await http.close();
      await durable.close();
      await bus.close();
    }
  });
});
