import { serviceConfigReader } from "@gw/host";
import { describe, expect, it } from "vitest";
import { readsSection, SERVICE_READS, serviceReader } from "./check-as.js";

describe("config check --as", () => {
  it("reads the config as the named service does, and knows only the distributed services", () => {
    expect(serviceReader("edge")).toEqual({ service: "edge", sections: SERVICE_READS.edge });
    expect(serviceReader("delivery")).toEqual({ service: "delivery", sections: SERVICE_READS.delivery });
    for (const name of ["gateway", "", "toString", "__proto__"]) expect(serviceReader(name), name).toBeUndefined();
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
