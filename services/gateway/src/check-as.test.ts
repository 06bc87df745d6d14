import { serviceConfigReader } from "@gw/host";
import { describe, expect, it } from "vitest";
import { readsSection, SERVICE_READS, takeCheckAs } from "./check-as.js";

describe("config check --as", () => {
  it("takes --as <service> or --as=<service> out of the arguments, as that service's reader", () => {
    expect(takeCheckAs(["--config", "a.json5", "--as", "edge"])).toEqual({
      reader: { service: "edge", sections: SERVICE_READS.edge },
      rest: ["--config", "a.json5"],
    });
    expect(takeCheckAs(["--as=delivery", "-c", "a.json5"])).toEqual({
      reader: { service: "delivery", sections: SERVICE_READS.delivery },
      rest: ["-c", "a.json5"],
    });
    expect(takeCheckAs(["--config", "a.json5"])).toEqual({ rest: ["--config", "a.json5"] });
  });

  it("refuses a name that is not a distributed service", () => {
    expect(() => takeCheckAs(["--as", "gateway"])).toThrow(
      '--as must name a distributed service (edge, sessions, agent-runner, delivery, hooks), got "gateway"',
    );
    expect(() => takeCheckAs(["--as"])).toThrow(/got ""/);
  });

  it("keeps platform secrets to delivery and provider keys to the runner (DESIGN §9)", () => {
    const holders = (section: "channels" | "models") =>
      Object.keys(SERVICE_READS).filter((service) => readsSection({ service, sections: SERVICE_READS[service]! }, section));
    expect(holders("channels")).toEqual(["delivery"]);
    expect(holders("models")).toEqual(["agent-runner"]);
    expect(readsSection(undefined, "channels")).toBe(true);
  });

  it("lists, for every service, what its host reads too (startHost refuses a list without it)", () => {
    for (const [service, reads] of Object.entries(SERVICE_READS)) {
      expect(() => serviceConfigReader({ service, reads, needs: { fastStore: true } }), service).not.toThrow();
    }
  });
});
