export {
  type ChannelAdapter,
  type ChannelLimits,
  type ChannelPluginConfig,
  type ChannelPluginFactory,
  type ChannelProbe,
  type DeliveryReceipt,
  type OutboundMessage,
  type OutboundPoll,
  receiptOf,
  sendPollVia,
} from "./channel-adapter.js";
export {
  CHANNEL_ERROR_KINDS,
  ChannelError,
  type ChannelErrorKind,
  type ChannelErrorOptions,
  isChannelError,
} from "./channel-error.js";
export {
  CHANNEL_KINDS,
  CHANNEL_SETTINGS_SCHEMAS,
  type ChannelKind,
  type ChannelSettings,
  DiscordSettingsSchema,
  type DiscordSettings,
  type DmPolicy,
  DmPolicySchema,
  E164,
  IMessageSettingsSchema,
  type IMessageSettings,
  isChannelKind,
  SignalSettingsSchema,
  type SignalSettings,
  SlackSettingsSchema,
  type SlackSettings,
  TelegramSettingsSchema,
  type TelegramSettings,
  toE164,
  WhatsAppSettingsSchema,
  type WhatsAppSettings,
} from "./channel-settings.js";
export {
  type ChannelAccount,
  DEFAULT_ACCOUNT_ID,
  parseChannelAccounts,
  resolveAccounts,
} from "./channel-accounts.js";
export { chunkText, MIN_CHUNK_LIMIT } from "./chunk/chunk-text.js";
export type {
  ChannelReceiver,
  InboundAttachment,
  InboundEndpoint,
  InboundMessage,
  InboundReply,
  InboundResult,
  RawInbound,
  ReceivedBatch,
} from "./inbound.js";
