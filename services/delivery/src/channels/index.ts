import { pluginTable } from "./registry.js";
import { slackPlugin } from "./slack/plugin.js";
import { telegramPlugin } from "./telegram/plugin.js";

/** Every platform plugin this build ships: `channels.<id>.kind` picks one. */
export const CHANNEL_PLUGINS = pluginTable([telegramPlugin, slackPlugin]);
