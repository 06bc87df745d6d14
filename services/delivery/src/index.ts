export { DELIVERY_CONFIG_READS } from "./config-reads.js";
export { checkChannels } from "./channel-directory.js";
export { CHANNEL_PLUGINS } from "./channels/index.js";
export {
  DEFAULT_MEDIA_LIMITS,
  type DeliveryHost,
  type DeliveryPlugin,
  type HttpClientFactory,
  type MediaLimits,
  type PluginContext,
} from "./channels/registry.js";
export { HttpClients } from "./http-clients.js";
export { type DeliveryService, type DeliveryServiceDeps, startDeliveryService } from "./service.js";
export { DEFAULT_RECEIVER_TIMING, type ReceiverTiming } from "./inbound/receive/account-receiver.js";
export { type Receivers, type ReceiversDeps, startReceivers } from "./inbound/receive/receivers.js";
export type { InboundOrigin, InboundSink } from "./inbound/store/sink.js";
