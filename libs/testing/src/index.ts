export { type Backend, chooseBackend, type HarnessProbe, INSTALL_HINT } from "./backend.js";
export { findBinary } from "./find-binary.js";
export { freePort } from "./free-port.js";
export { type NatsServerHandle, type StartNatsOptions, startNats } from "./nats-server.js";
export { type RedisServerHandle, type StartRedisOptions, startRedis } from "./redis-server.js";
export { type NatsClusterHandle, type NatsClusterNode, type StartNatsClusterOptions, startNatsCluster } from "./nats-cluster.js";
export { type RedisClusterHandle, type StartRedisClusterOptions, startRedisCluster } from "./redis-cluster.js";
export { StartupError } from "./server-lifecycle.js";
export { type WaitForOptions, waitFor, waitUntil } from "./wait-for.js";
export { type FakeModelServer, type RecordedRequest, startFakeModelServer } from "./fakes/fake-model-server.js";
export type { FakeTurn } from "./fakes/fake-model-script.js";
export { FAKE_USAGE } from "./fakes/openai-wire.js";
export { everythingMcpServer, type FakeMcpHttpServer, startFakeMcpHttpServer } from "./fakes/mcp-http-server.js";
export {
  bearerToken,
  bodyFields,
  type FakeDelivery,
  type FakeFile,
  type FakeMedia,
  type FakePoll,
  type FakeReply,
  type FakeRequest,
  type FakeStep,
  isFakeFile,
  type PlatformContext,
  type PlatformFake,
  type PlatformFakeOptions,
  type PlatformWire,
  startPlatformFake,
} from "./fakes/platform-fake.js";
export {
  DEFAULT_TELEGRAM_BOTS,
  DEFAULT_TELEGRAM_CHATS,
  type FakeTelegram,
  type FakeTelegramBot,
  type FakeTelegramChat,
  startFakeTelegram,
} from "./fakes/fake-telegram.js";
export { TELEGRAM_CAPTION_LIMIT, TELEGRAM_TEXT_LIMIT } from "./fakes/fake-telegram-messages.js";
export type { PollStats, TelegramEntity, TelegramUpdate, TelegramUser, UserMessage } from "./fakes/fake-telegram-updates.js";
export {
  DEFAULT_SLACK_BOTS,
  DEFAULT_SLACK_CONVERSATIONS,
  type FakeSlack,
  type FakeSlackBot,
  type FakeSlackConversation,
  SLACK_TEXT_LIMIT,
  startFakeSlack,
} from "./fakes/fake-slack.js";
export {
  DEFAULT_DISCORD_BOTS,
  DEFAULT_DISCORD_CHANNELS,
  DEFAULT_DISCORD_USERS,
  DISCORD_TEXT_LIMIT,
  type FakeDiscord,
  type FakeDiscordBot,
  type FakeDiscordChannel,
  type FakeDiscordUser,
  startFakeDiscord,
} from "./fakes/fake-discord.js";
export { DEFAULT_SIGNAL_ACCOUNTS, type FakeSignal, startFakeSignal } from "./fakes/fake-signal.js";
export type { ReceiveStats, SignalMode, SignalUserMessage, TypingCall } from "./fakes/fake-signal-receive.js";
export {
  DEFAULT_WHATSAPP_NUMBERS,
  type FakeWhatsApp,
  type FakeWhatsAppNumber,
  startFakeWhatsApp,
  WHATSAPP_CAPTION_LIMIT,
  WHATSAPP_TEXT_LIMIT,
} from "./fakes/fake-whatsapp.js";
export {
  DEFAULT_BLUEBUBBLES_SERVERS,
  type FakeBlueBubbles,
  type FakeBlueBubblesServer,
  startFakeBlueBubbles,
} from "./fakes/fake-bluebubbles.js";
export {
  DEFAULT_MEDIA_FILES,
  type FakeMediaFile,
  type FakeMediaServer,
  startFakeMediaServer,
} from "./fakes/fake-media-server.js";
export {
  type FakeDiscordGateway,
  type FakeGatewayBot,
  type GatewayMessage,
  type GatewayStats,
  startFakeDiscordGateway,
} from "./fakes/fake-discord-gateway.js";
export { promtoolCheck } from "./promtool.js";
export { envForConfig } from "./example-env.js";
export { GROUP_ANONYMOUS_BOT, type TelegramUpdateInput, telegramUpdate, telegramWebhookRequest } from "./fakes/telegram-updates.js";
export {
  type SlackMessageInput,
  type SlackSigningOptions,
  signedSlackRequest,
  slackChannelCreatedEvent,
  slackMessageEvent,
  slackUrlVerification,
  slackUserEvent,
} from "./fakes/slack-events.js";
export {
  signedWhatsAppRequest,
  type WhatsAppMessageInput,
  whatsappMessageNotification,
  whatsappStatusNotification,
  whatsappVerificationQuery,
} from "./fakes/whatsapp-webhooks.js";
export { type BlueBubblesMessageInput, blueBubblesNewMessage, blueBubblesTypingEvent } from "./fakes/bluebubbles-webhooks.js";
