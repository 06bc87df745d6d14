export { type Edge, type EdgeDeps, startEdge } from "./edge.js";
