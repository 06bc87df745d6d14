export * from "./delivery-results.js";
export * from "./device-results.js";
export * from "./method-results.js";
export * from "./operator-results.js";
export * from "./run-results.js";
export * from "./session-results.js";
