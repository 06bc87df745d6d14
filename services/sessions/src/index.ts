export { SESSIONS_CONFIG_READS } from "./config-reads.js";
export { FileSessionRepository } from "./files/file-repository.js";
export { JetStreamSessionRepository, type JetStreamSessionOptions } from "./jetstream/jetstream-repository.js";
export { partitionOf } from "./jetstream/session-streams.js";
export { RedisSessionIndex } from "./list-index/redis-session-index.js";
export type { NewSession, SessionRepository } from "./repository.js";
export { type SessionsService, type SessionsServiceDeps, startSessionsService } from "./service.js";
