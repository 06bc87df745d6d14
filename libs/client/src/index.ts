export { GatewayClient, GatewayRpcError, type EventListener, type RequestOptions, type SocketFactory, type SocketLike } from "./gateway-client.js";
export * from "./protocol.js";
