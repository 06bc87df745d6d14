export {
  type ChannelAdapter,
  type ChannelInbound,
  type ChannelLimits,
  type ChannelPolls,
  type ChannelProbe,
  type ChannelTyping,
  type DeliveryReceipt,
  type OutboundMessage,
  type OutboundPoll,
  receiptOf,
  sendPollVia,
  statusOf,
} from "./channel-adapter.js";
export { type ChannelPlugin, definePlugin, type PluginAccount } from "./channel-plugin.js";
export {
  CHANNEL_ERROR_KINDS,
  ChannelError,
  type ChannelErrorKind,
  type ChannelErrorOptions,
  isChannelError,
  type RateLimitScope,
} from "./channel-error.js";
export {
  COMMON_SETTINGS,
  type CommonChannelSettings,
  type DmPolicy,
  DmPolicySchema,
  E164,
  httpUrl,
  nonEmpty,
  phoneAllowFrom,
  toE164,
} from "./channel-settings.js";
export { PER_CHAT_PER_SECOND, type RateRule, rateRulesFor } from "./rate-rules.js";
export {
  type ChannelAccount,
  DEFAULT_ACCOUNT_ID,
  parseChannelAccounts,
  resolveAccounts,
} from "./channel-accounts.js";
export { chunkText, MIN_CHUNK_LIMIT } from "./chunk/chunk-text.js";
export type {
  ChannelReceiver,
  FetchedFile,
  InboundAttachment,
  InboundEndpoint,
  InboundFiles,
  InboundMessage,
  InboundReply,
  InboundResult,
  RawInbound,
  ReceivedBatch,
} from "./inbound.js";
