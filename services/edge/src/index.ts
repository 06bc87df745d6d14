export { EDGE_CONFIG_READS } from "./config-reads.js";
export { type Edge, type EdgeDeps, startEdge } from "./edge.js";
