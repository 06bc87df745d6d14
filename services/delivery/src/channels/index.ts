import { discordPlugin } from "./discord/plugin.js";
import { imessagePlugin } from "./imessage/plugin.js";
import type { DeliveryPlugin } from "./registry.js";
import { signalPlugin } from "./signal/plugin.js";
import { slackPlugin } from "./slack/plugin.js";
import { telegramPlugin } from "./telegram/plugin.js";
import { whatsappPlugin } from "./whatsapp/plugin.js";

/** Every platform plugin this build ships: `channels.<id>.kind` picks one. */
export const CHANNEL_PLUGINS: readonly DeliveryPlugin[] = [telegramPlugin, slackPlugin, discordPlugin, signalPlugin, whatsappPlugin, imessagePlugin];
