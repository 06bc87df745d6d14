export { type EmbeddedGateway, startEmbedded } from "./embedded.js";
