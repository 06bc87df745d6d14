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
export { NoServiceAnswers } from "./bus.js";
export { InProcessBus } from "./in-process-bus.js";
export { NatsBus } from "./nats-bus.js";
export { RequestMux } from "./nats-request-mux.js";
export { connectNats, type NatsConnectOptions } from "./nats-connection.js";
export { callRpc, defineRpc, type MessageCodec, type RpcDefinition, serveRpc } from "./rpc.js";
export {
  createSubjects,
  decodeSubjectToken,
  encodeSubjectToken,
  hashPartition,
  RUN_EVENT_PARTS,
  type RunEventPart,
  type RunEventScope,
  type SubjectOptions,
  type Subjects,
} from "./subjects.js";
export {
  beginSpan,
  type EndedSpan,
  installSpanSink,
  OpenSpan,
  type SpanAttributeValue,
  type SpanKind,
  type SpanSink,
  tracingEnabled,
} from "./spans.js";
export {
  currentRequestId,
  currentTrace,
  formatTraceparent,
  outgoingTraceparent,
  parseTraceparent,
  readTraceHeaders,
  REQUEST_ID_BUS_HEADER,
  requestIdOf,
  runInTrace,
  startRequestTrace,
  startSpan,
  TRACEPARENT_HEADER,
  type TraceContext,
  traceLogFields,
  writeTraceHeaders,
} from "./trace-context.js";
