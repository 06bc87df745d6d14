// A process that installs the fault guard with the policy named in argv[2], then, while handling
// "request req_fault", leaves a promise's rejection unhandled and throws from a timer. It prints
// the faults metric and "SERVING AFTER THE FAULTS" if it is still running 300 ms later.
import { AsyncLocalStorage } from "node:async_hooks";
import { createLogger, createMetrics, guardProcess, Shutdown, type UncaughtExceptionPolicy } from "../src/index.js";

const policy = process.argv[2] as UncaughtExceptionPolicy;
const request = new AsyncLocalStorage<{ reqId: string }>();
const logger = createLogger({ service: "faulty", level: "info", mixin: () => ({ ...request.getStore() }) });
const metrics = createMetrics({ service: "faulty", collectDefault: false });
const shutdown = new Shutdown({ logger, timeoutMs: 2_000 });
shutdown.add("server", () => logger.info("server closed"));
guardProcess({ logger, metrics, onUncaughtException: policy, shutdown: (reason, code) => shutdown.run(reason, code) });

request.run({ reqId: "req_fault" }, () => {
  // eslint-disable-next-line @typescript-eslint/no-floating-promises -- the fault under test
  Promise.reject(new Error("a read nobody waited for failed"));
  setTimeout(() => {
    throw new Error("a callback threw");
  }, 20);
});
setTimeout(() => {
  metrics.registry.getSingleMetricAsString("gw_process_faults_total").then(
    (text) => {
      process.stdout.write(`${text}\nSERVING AFTER THE FAULTS\n`);
      process.exit(0);
    },
    () => process.exit(2),
  );
}, 300);
