import { discordPlugin } from "./discord/plugin.js";
import { imessagePlugin } from "./imessage/plugin.js";
import { pluginTable } from "./registry.js";
import { signalPlugin } from "./signal/plugin.js";
import { slackPlugin } from "./slack/plugin.js";
import { telegramPlugin } from "./telegram/plugin.js";
import { whatsappPlugin } from "./whatsapp/plugin.js";

/** Every platform plugin this build ships: `channels.<id>.kind` picks one. */
export const CHANNEL_PLUGINS = pluginTable([
  telegramPlugin,
  slackPlugin,
  discordPlugin,
  signalPlugin,
  whatsappPlugin,
  imessagePlugin,
]);
