export { FileSessionRepository } from "./file-repository.js";
export { JetStreamSessionRepository, type JetStreamSessionOptions } from "./jetstream-repository.js";
export type { SessionRepository } from "./repository.js";
export { type SessionsService, type SessionsServiceDeps, startSessionsService } from "./service.js";
