import { posix } from "node:path";
import { defaultConfig } from "@gw/config";
import { describe, expect, it } from "vitest";
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from "../../services/gateway/test/fixtures/processes.js";
import { distributedServices, dockerStages, lastInstruction } from "./deploy-files.js";

const stages = dockerStages();
/** Every image the Dockerfile is built for: each distributed service and the embedded gateway. */
const targets = [...distributedServices(), "gateway"];

describe("Dockerfile", () => {
  it("has a target per service that runs its bundle", () => {
    for (const target of targets) {
      const cmd = lastInstruction(stages, target, "CMD");
      expect(cmd, `target ${target}`).toBeDefined();
      expect(JSON.parse(cmd!)).toEqual(expect.arrayContaining(["node", `dist/${target}.js`]));
    }
  });

  it("runs every target with the V8 flags and environment the test fixture starts services with", () => {
    const fixture = Object.entries(SERVICE_ENV).map(([name, value]) => `${name}=${value}`);
    for (const target of targets) {
      const env = lastInstruction(stages, target, "ENV");
      expect(env, target).toBe([`NODE_OPTIONS=${SERVICE_NODE_FLAGS.join(" ")}`, ...fixture].join(" "));
    }
  });

  it("runs every target as a numeric non-root user, as Kubernetes' runAsNonRoot requires", () => {
    for (const target of targets) {
      const user = lastInstruction(stages, target, "USER");
      expect(user, target).toMatch(/^\d+:\d+$/);
      expect(Number(user!.split(":")[0]), target).toBeGreaterThan(0);
    }
  });

  it("gives that user the data directory the embedded gateway writes (gateway.dataDir from WORKDIR)", () => {
    const workdir = lastInstruction(stages, "gateway", "WORKDIR")!;
    const dataDir = posix.resolve(workdir, defaultConfig().gateway.dataDir);
    const user = lastInstruction(stages, "gateway", "USER")!;
    const runtime = stages.find((s) => s.name === "runtime")!;
    const runs = runtime.instructions.filter((i) => i.op === "RUN").map((i) => i.args);
    expect(runs.some((run) => run.includes(`mkdir -p ${dataDir}`) && run.includes(`chown ${user} ${dataDir}`))).toBe(true);
    // RUN steps after USER would run as that user and could not chown; the chown comes first.
    const order = runtime.instructions.map((i) => i.op);
    expect(order.lastIndexOf("RUN")).toBeLessThan(order.indexOf("USER"));
  });
});
