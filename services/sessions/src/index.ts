export { FileSessionRepository } from "./files/file-repository.js";
export { JetStreamSessionRepository, type JetStreamSessionOptions } from "./jetstream/jetstream-repository.js";
export type { SessionRepository } from "./repository.js";
export { type SessionsService, type SessionsServiceDeps, startSessionsService } from "./service.js";
