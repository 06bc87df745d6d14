import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import { Parser } from "@asyncapi/parser";
import { createSubjects, InProcessBus } from "@gw/bus";
import { isMethodName, METHOD_RESULTS } from "@gw/contracts";
import { createLogger } from "@gw/runtime";
import { InProcessRunEventLog, InProcessRunQueue, RunRegistry } from "@gw/runs";
import { createFileDurableStore, createMemoryFastStore } from "@gw/store";
import { describe, expect, it } from "vitest";
import { rolesFor } from "../auth/permissions.js";
import { startDeviceServices } from "../devices/device-services.js";
import { defaultConfig } from "@gw/config";
import { EventHub } from "../events/event-hub.js";
import { RunClient } from "../runs/run-client.js";
import { RunEventRouter } from "../events/run-event-router.js";
import { EdgePresence } from "../status/edge-presence.js";
import { agentSubscribeMethods } from "../methods/agent-subscribe.js";
import { AgentSubscriptions } from "../events/agent-subscriptions.js";
import { agentRunMethods } from "../methods/agent-runs.js";
import { agentMethods } from "../methods/agents.js";
import { channelPairingMethods } from "../methods/channel-pairing.js";
import { cronMethods } from "../methods/cron.js";
import { deliveryMethods } from "../methods/delivery.js";
import { deviceMethods } from "../methods/devices.js";
import { operatorMethods } from "../methods/operator.js";
import { toolMethods } from "../methods/tools.js";
import { pairingMethods } from "../methods/pairing.js";
import { sessionMethods } from "../methods/sessions.js";
import { buildAsyncApi } from "./asyncapi.js";
import { buildOpenApi } from "./openapi.js";
import { WS_METHODS } from "./ws-catalogue.js";

/** The checked-in document (scripts/check-generated.mjs proves it is what the builders make). */
function checkedIn(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`../../../../docs/${file}`, import.meta.url), "utf8")) as Record<string, unknown>;
}

/** The method definitions the edge registers, built as startEdge builds them. */
async function registeredMethods() {
  const bus = new InProcessBus();
  const subjects = createSubjects("gw");
  const logger = createLogger({ service: "test", level: "silent" });
  const store = createMemoryFastStore();
  const hub = new EventHub({ bus, subjects, logger });
  const router = new RunEventRouter({ bus, subjects, hub, logger, edgeId: "e" });
  const runs = new RunClient({
    bus,
    subjects,
    queue: new InProcessRunQueue(),
    registry: new RunRegistry(store),
    router,
    edgeId: "e",
    logger,
    defaultTimeoutSeconds: 30,
  });
  const busDeps = { bus, subjects, requestTimeoutMs: 1_000 };
  const dir = mkdtempSync(join(tmpdir(), "gw-api-docs-"));
  const durable = await createFileDurableStore(dir);
  const devices = await startDeviceServices({ config: defaultConfig(), bus, subjects, fastStore: store, durable, edgeId: "e", logger });
  const defs = [
    ...agentMethods(busDeps),
    ...agentRunMethods(runs, logger),
    ...agentSubscribeMethods(
      new AgentSubscriptions({
        router,
        hub,
        registry: new RunRegistry(store),
        log: new InProcessRunEventLog({ bus, subjects }, { maxAgeMs: 1_000, maxBytes: 1_000 }),
        logger,
        maxPerConnection: 10,
      }),
    ),
    ...sessionMethods(busDeps),
    ...deliveryMethods({ ...busDeps, sendTimeoutMs: 1_000 }),
    ...pairingMethods(devices),
    ...deviceMethods(devices),
    ...channelPairingMethods(busDeps),
    ...cronMethods(busDeps),
    ...toolMethods(busDeps),
    ...operatorMethods({
      ...busDeps,
      registry: new RunRegistry(store),
      presence: new EdgePresence({ store, edgeId: "e", version: "0", logger, connections: () => 0, draining: () => false }),
      edgeId: "e",
      hooksEnabled: false,
    }),
  ];
  devices.close();
  await durable.close();
  rmSync(dir, { recursive: true, force: true });
  router.close();
  hub.close();
  return defs;
}

describe("API documents", () => {
  it("document every WebSocket method the edge registers, with the schema it validates with and the roles of the permission table", async () => {
    const documented = new Map(WS_METHODS.map((m) => [m.name, m]));
    const registered = await registeredMethods();
    expect([...documented.keys()].sort()).toEqual(["connect", ...registered.map((def) => def.name)].sort());
    for (const def of registered) {
      expect(documented.get(def.name)?.params, def.name).toBe(def.params);
      expect(documented.get(def.name)?.roles, def.name).toEqual(rolesFor(def.name));
    }
  });

  it("every method the edge registers has a result schema, and the documents show that schema", async () => {
    const registered = (await registeredMethods()).map((def) => def.name);
    expect(Object.keys(METHOD_RESULTS).sort()).toEqual(["connect", ...registered].sort());
    for (const method of WS_METHODS) {
      expect(isMethodName(method.name), method.name).toBe(true);
      expect(method.result, method.name).toBe(METHOD_RESULTS[method.name]);
    }
  });

  it("says in the documents which roles may call what", () => {
    // The checked-in document says the same (check-generated proves it current; this, that it says roles at all).
    const operations = (checkedIn("asyncapi.json") as { operations: Record<string, { description?: string }> }).operations;
    expect(operations["sessions.list"]?.description).toBe("Roles: control.");
    expect(operations["node.pair.request"]?.description).toBe("Roles: control, node; also a pairing connection.");
    expect(operations["event.node.pair.requested"]?.description).toBe("Received by roles: control.");
  });

  it("docs/openapi.json is a valid OpenAPI 3.1 document", async () => {
    const doc = checkedIn("openapi.json");
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
    expect(Object.keys(doc.paths as object).sort()).toEqual([
      "/api/channels/{channelId}/webhook",
      "/api/channels/{channelId}/{accountId}/webhook",
      "/api/chatapp/events",
      "/api/send",
      "/api/tools/invoke",
      "/health",
      "/hooks/agent",
      "/hooks/wake",
      "/hooks/{path}",
      "/v1/chat/completions",
      "/v1/models",
      "/v1/models/{id}",
      "/v1/responses",
      "/v1/responses/{id}",
    ]);
  });

  it("docs/asyncapi.json is a valid AsyncAPI 3 document with no errors or warnings", async () => {
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(checkedIn("asyncapi.json")));
    const serious = diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.code}: ${d.message} at ${d.path.join(".")}`);
    expect(serious).toEqual([]);
    expect(document).toBeDefined();
    expect(document!.operations().all().map((op) => op.id())).toEqual(expect.arrayContaining(["connect", "agent", "event.agent"]));
  });

  it("the validators refuse a broken document, so a pass means something", async () => {
    const openapi = buildOpenApi() as { paths: Record<string, { get?: { responses?: unknown } }> };
    openapi.paths["/health"]!.get!.responses = "none";
    await expect(SwaggerParser.validate(openapi as never)).rejects.toThrow();
    const asyncapi = buildAsyncApi() as { operations: Record<string, { action: string }> };
    asyncapi.operations.agent!.action = "publish";
    const { diagnostics } = await new Parser().parse(JSON.stringify(asyncapi));
    expect(diagnostics.some((d) => d.severity === 0)).toBe(true);
  });
});
