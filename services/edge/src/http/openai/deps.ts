import type { Logger } from "@gw/runtime";
import type { TextOnlyModel } from "../../runs/image-input.js";
import type { RunClient } from "../../runs/run-client.js";
import type { HttpDeps } from "../routes.js";
import type { StoredResponses } from "./stored-responses.js";

export interface OpenAiDeps extends HttpDeps {
  runs: RunClient;
  logger: Logger;
  /** The configured agents, whose ids are the models (`model` may also say `agent:<id>`). */
  agentIds: readonly string[];
  /** Which model of an agent takes no images (a request with images to it is refused). */
  textOnlyModel: TextOnlyModel;
  /** Responses kept with store: true. */
  responses: StoredResponses;
}
