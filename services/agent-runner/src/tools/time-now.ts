import { GatewayError } from "@gw/contracts";
import { z } from "zod";
import { defineTool } from "./tool-registry.js";

export const timeNowTool = defineTool({
  name: "time.now",
  description: "The current date and time, optionally in an IANA time zone such as Europe/Berlin.",
  input: z.object({ timezone: z.string().min(1).max(64).optional() }),
  run: async ({ timezone }) => {
    const now = new Date();
    const zone = timezone ?? "UTC";
    let local: string;
    try {
      local = now.toLocaleString("sv-SE", { timeZone: zone, hour12: false });
    } catch {
      throw new GatewayError("INVALID_REQUEST", `params.timezone: unknown time zone ${zone}`);
    }
    return { content: `${local} (${zone})`, iso: now.toISOString(), epochMs: now.getTime(), timezone: zone };
  },
});
