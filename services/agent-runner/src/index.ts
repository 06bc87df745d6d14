export { RUNNER_CONFIG_READS } from "./config-reads.js";
export { AgentDirectory } from "./agent-directory.js";
export { type Runner, type RunnerDeps, startRunner } from "./runner.js";
