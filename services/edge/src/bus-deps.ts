import type { Bus, Subjects } from "@gw/bus";

/** What every edge surface that asks a service over the bus needs (WebSocket methods, HTTP routes). */
export interface BusDeps {
  bus: Bus;
  subjects: Subjects;
  /** Bounds each request (gateway.limits.requestTimeoutMs). */
  requestTimeoutMs: number;
}
