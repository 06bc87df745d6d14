export { type HooksService, type HooksServiceDeps, startHooksService } from "./service.js";
