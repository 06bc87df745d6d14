export { type Backend, chooseBackend, type HarnessProbe, INSTALL_HINT } from "./backend.js";
export { freePort } from "./free-port.js";
export { type NatsServerHandle, type StartNatsOptions, startNats } from "./nats-server.js";
export { type RedisServerHandle, type StartRedisOptions, startRedis } from "./redis-server.js";
export { StartupError } from "./server-lifecycle.js";
export { type WaitForOptions, waitFor } from "./wait-for.js";
export { type FakeModelServer, type RecordedRequest, startFakeModelServer } from "./fakes/fake-model-server.js";
