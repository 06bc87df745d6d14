// Keeps `runs` agent runs going against one gateway for the sessions-scale benchmark (see
// bench/lib/run-load.ts). Config comes as JSON in RUN_LOAD_CONFIG; prints "loading" once its
// sockets are open, and on SIGTERM lets the runs in hand finish, prints "summary <json>" and exits.
import { RunLoad, type RunLoadConfig } from "../lib/run-load.js";

const config = JSON.parse(process.env.RUN_LOAD_CONFIG ?? "{}") as RunLoadConfig;
const load = await RunLoad.start(config.url, config.runs, { agentId: config.agentId, keyPrefix: config.keyPrefix });
console.log("loading");
process.once("SIGTERM", () => {
  load.stop().then(
    (summary) => {
      console.log(`summary ${JSON.stringify(summary)}`);
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
});
