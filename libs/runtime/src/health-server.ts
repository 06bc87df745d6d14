import { createServer, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from "node:http2";
import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import type { Logger } from "./logger.js";

export interface HealthServer {
  /** The bound port (the actual one when 0 was asked for). */
  port: number;
  /** Reads the probe now and tells Watch streams of a change (the drain calls it first). */
  refresh(): void;
  close(): Promise<void>;
}

export interface HealthServerOptions {
  port: number;
  /** The address to listen on (ops.bind, or gateway.bind). */
  host: string;
  /** Known service name besides "" (the server as a whole). */
  service: string;
  /** True = SERVING. Called on every Check and every poll for Watch streams. */
  probe: () => boolean;
  logger?: Logger;
}

/**
 * The liveness service: SERVING while the process answers at all, whatever its connections. A
 * Redis outage should take a pod out of its Service (readiness), not restart it.
 */
export const LIVENESS_SERVICE = "liveness";

const WATCH_POLL_MS = 500;
const CLOSE_GRACE_MS = 2_000;
/** A HealthCheckRequest is one short string; anything longer is not one. */
const MAX_REQUEST_BYTES = 4_096;

/** grpc.health.v1.HealthCheckResponse.ServingStatus. */
const STATUS = { SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;
type ServingStatus = keyof typeof STATUS;
/** gRPC status codes this server answers with. */
const GRPC = { OK: 0, INVALID_ARGUMENT: 3, NOT_FOUND: 5, RESOURCE_EXHAUSTED: 8, UNIMPLEMENTED: 12 } as const;

/** A gRPC message frame: uncompressed flag, 4-byte big-endian length, the message. */
function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

const statusMessage = (status: ServingStatus) => new BinaryWriter().uint32(8).int32(STATUS[status]).finish();

/** HealthListResponse: `map<string, HealthCheckResponse> statuses = 1`. */
function listMessage(statuses: Map<string, ServingStatus>): Uint8Array {
  const writer = new BinaryWriter();
  for (const [service, status] of statuses) {
    writer.uint32(10).fork().uint32(10).string(service).uint32(18).bytes(statusMessage(status)).join();
  }
  return writer.finish();
}

/** The `service` field of a HealthCheckRequest frame; undefined when the body is not one. */
function requestedService(body: Buffer): string | undefined {
  if (body.length === 0) return "";
  if (body.length < 5 || body[0] !== 0 || body.readUInt32BE(1) !== body.length - 5) return undefined;
  const reader = new BinaryReader(body.subarray(5));
  let service = "";
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === 2) service = reader.string();
    else reader.skip(wireType);
  }
  return service;
}

/** A trailers-only answer: the call's status in the one HEADERS frame. */
function fail(stream: ServerHttp2Stream, code: number, message: string): void {
  if (stream.destroyed || stream.headersSent) return;
  stream.respond(
    { ":status": 200, "content-type": "application/grpc", "grpc-status": String(code), "grpc-message": encodeURIComponent(message) },
    { endStream: true },
  );
}

/** Answers with one message and status OK. */
function answer(stream: ServerHttp2Stream, message: Uint8Array): void {
  if (stream.destroyed) return;
  stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
  stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": String(GRPC.OK) }));
  stream.end(frame(message));
}

/** Reads a unary request's body (bounded), then hands it on. */
function readBody(stream: ServerHttp2Stream, then: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on("data", (chunk: Buffer) => {
    size += chunk.length;
    // Answered at once; the rest of the body is read and dropped.
    if (size > MAX_REQUEST_BYTES) fail(stream, GRPC.RESOURCE_EXHAUSTED, "request too large");
    else chunks.push(chunk);
  });
  stream.once("end", () => {
    if (size <= MAX_REQUEST_BYTES) then(Buffer.concat(chunks));
  });
}

/**
 * Serves grpc.health.v1.Health (Check, Watch, List) for Kubernetes' native gRPC probes, on
 * Node's own HTTP/2 (h2c): the three calls' messages are a string and an enum, and a gRPC
 * framework would cost every process about 18 MiB of memory. Readiness ("" and the process's
 * service name) follows `probe`; `liveness` is SERVING until the server closes.
 */
export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const statuses = new Map<string, ServingStatus>([
    ["", "NOT_SERVING"],
    [opts.service, "NOT_SERVING"],
    [LIVENESS_SERVICE, "SERVING"],
  ]);
  const watches = new Map<ServerHttp2Stream, string>();
  const tell = (service: string) => {
    const status = statuses.get(service) ?? "SERVICE_UNKNOWN";
    for (const [stream, watched] of watches) if (watched === service && !stream.destroyed) stream.write(frame(statusMessage(status)));
  };
  const set = (service: string, status: ServingStatus) => {
    if (statuses.get(service) === status) return;
    statuses.set(service, status);
    tell(service);
  };
  // A Check asks the probe first, so a kubelet probe sees the state of this moment, and Watch
  // streams hear of changes by the poll (or at once from refresh).
  const refresh = () => {
    let serving: boolean;
    try {
      serving = opts.probe();
    } catch (err) {
      opts.logger?.warn({ err }, "health probe threw; reporting NOT_SERVING");
      serving = false;
    }
    for (const service of ["", opts.service]) set(service, serving ? "SERVING" : "NOT_SERVING");
  };
  refresh();

  const onStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    stream.on("error", () => watches.delete(stream));
    const path = headers[":path"];
    if (headers[":method"] !== "POST" || !String(headers["content-type"] ?? "").startsWith("application/grpc")) {
      if (!stream.headersSent) stream.respond({ ":status": 415 }, { endStream: true });
      return;
    }
    readOrWatch(stream, String(path));
  };
  const readOrWatch = (stream: ServerHttp2Stream, path: string) => {
    if (path === "/grpc.health.v1.Health/Watch") {
      readBody(stream, (body) => {
        const service = requestedService(body);
        if (service === undefined) return fail(stream, GRPC.INVALID_ARGUMENT, "not a HealthCheckRequest");
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
        stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": String(GRPC.OK) }));
        stream.once("close", () => watches.delete(stream));
        watches.set(stream, service);
        stream.write(frame(statusMessage(statuses.get(service) ?? "SERVICE_UNKNOWN")));
      });
      return;
    }
    readBody(stream, (body) => {
      if (path === "/grpc.health.v1.Health/List") return answer(stream, listMessage(statuses));
      if (path !== "/grpc.health.v1.Health/Check") return fail(stream, GRPC.UNIMPLEMENTED, `unknown method ${path}`);
      const service = requestedService(body);
      if (service === undefined) return fail(stream, GRPC.INVALID_ARGUMENT, "not a HealthCheckRequest");
      refresh();
      const status = statuses.get(service);
      if (status === undefined) return fail(stream, GRPC.NOT_FOUND, `unknown service ${service}`);
      answer(stream, statusMessage(status));
    });
  };

  const { server, sessions, port } = await listenH2(opts, onStream);
  const poll = setInterval(refresh, WATCH_POLL_MS);
  poll.unref();
  opts.logger?.info({ host: opts.host, port, service: opts.service }, "gRPC health server listening");

  return {
    port,
    refresh,
    close: async () => {
      clearInterval(poll);
      for (const service of ["", opts.service, LIVENESS_SERVICE]) set(service, "NOT_SERVING");
      for (const stream of watches.keys()) if (!stream.destroyed) stream.end();
      watches.clear();
      await closeServer(server, sessions);
    },
  };
}

/** A plain-text HTTP/2 server on `host`:`port` handing its streams to `onStream`, with its open sessions. */
async function listenH2(
  at: { port: number; host: string },
  onStream: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void,
): Promise<{ server: Http2Server; sessions: Set<ServerHttp2Session>; port: number }> {
  const server: Http2Server = createServer();
  const sessions = new Set<ServerHttp2Session>();
  server.on("session", (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  server.on("stream", onStream);
  server.on("sessionError", () => {});
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(at.port, at.host, () => {
      server.off("error", reject);
      resolve((server.address() as { port: number }).port);
    });
  });
  return { server, sessions, port };
}

/** Stops accepting and lets open sessions finish their calls; a client that does not let go is cut off. */
async function closeServer(server: Http2Server, sessions: Set<ServerHttp2Session>): Promise<void> {
  for (const session of sessions) session.close();
  await new Promise<void>((resolve) => {
    const force = setTimeout(() => {
      for (const session of sessions) session.destroy();
    }, CLOSE_GRACE_MS);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
  });
}
