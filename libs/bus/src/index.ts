export type {
  Bus,
  BusObserver,
  HandleOptions,
  HandlerErrorSink,
  MessageHandler,
  RequestContext,
  RequestHandler,
  RequestOptions,
  Unsubscribe,
} from "./bus.js";
export { InProcessBus } from "./in-process-bus.js";
export { NatsBus } from "./nats-bus.js";
export { RequestMux } from "./nats-request-mux.js";
export { connectNats, type NatsConnectOptions } from "./nats-connection.js";
export { callRpc, defineRpc, type MessageCodec, type RpcDefinition, serveRpc } from "./rpc.js";
export { createSubjects, decodeSubjectToken, encodeSubjectToken, type Subjects } from "./subjects.js";
export {
  currentTrace,
  formatTraceparent,
  outgoingTraceparent,
  parseTraceparent,
  requestIdOf,
  runInTrace,
  startSpan,
  TRACEPARENT_HEADER,
  type TraceContext,
  traceLogFields,
} from "./trace-context.js";
