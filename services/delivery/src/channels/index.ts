import { imessagePlugin } from "./imessage/plugin.js";
import { pluginTable } from "./registry.js";
import { signalPlugin } from "./signal/plugin.js";

/** Every platform plugin this build ships: `channels.<id>.kind` picks one. */
export const CHANNEL_PLUGINS = pluginTable([signalPlugin, imessagePlugin]);
