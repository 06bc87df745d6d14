/**
 * The signal-cli-rest-api wire (github.com/bbernhard/signal-cli-rest-api, src/api/api.go):
 * `POST /v2/send`, `POST /v1/polls/{number}`, `GET /v1/about`, `GET /v1/accounts`. Answers are
 * zod-parsed; failures become ChannelErrors with the bridge's reason (`{ error }`).
 */
import { ChannelError } from "@gw/channels";
import { type HttpClient, HttpError } from "@gw/http-client";
import { z } from "zod";
import { throwBridgeError } from "../bridge/bridge-errors.js";

export interface SendBody {
  number: string;
  recipients: string[];
  /** Empty for an attachment alone. */
  message: string;
  /** `data:<mime>;filename=<name>;base64,<data>` each. */
  base64_attachments?: string[];
  quote_timestamp?: number;
  quote_author?: string;
}

export interface PollBody {
  recipient: string;
  question: string;
  answers: string[];
  allow_multiple_selections: boolean;
}

/** Signal names a message by its sender's timestamp: a string in v2 answers, a number in older ones. */
const Timestamp = z.union([z.string().regex(/^\d+$/), z.int().nonnegative()]).transform(String);

/**
 * Besides the timestamp, the bridge lists recipients the message did not reach (signal-cli's
 * per-recipient results whose type is not SUCCESS).
 */
const SendAnswer = z.object({
  timestamp: Timestamp,
  errors: z
    .object({
      recipients: z
        .array(z.object({ number: z.string().optional(), uuid: z.string().optional(), reason: z.string().optional() }))
        .nullish(),
    })
    .nullish(),
});

const PollAnswer = z.object({ timestamp: Timestamp });

const About = z.object({ versions: z.array(z.string()), version: z.string().optional(), mode: z.string().optional() });

const Accounts = z.array(z.string());

export type SignalAbout = z.output<typeof About>;

export class SignalApi {
  constructor(private readonly http: HttpClient) {}

  /** Sends one message; resolves its timestamp, or rejects if the one person it was for did not get it. */
  async send(body: SendBody, direct: boolean, signal: AbortSignal): Promise<string> {
    const { data } = await this.http
      .requestJson({ method: "POST", path: "/v2/send", json: body, signal, parse: (raw) => SendAnswer.parse(raw) })
      .catch(throwBridgeError);
    const failed = data.errors?.recipients?.[0];
    // In a group a failure for some members still leaves the message with the others.
    if (direct && failed !== undefined) throw recipientFailure(failed.reason ?? "unknown", failed.number ?? failed.uuid ?? body.recipients[0]);
    return data.timestamp;
  }

  async createPoll(number: string, body: PollBody, signal: AbortSignal): Promise<string> {
    const { data } = await this.http
      .requestJson({ method: "POST", path: `/v1/polls/${encodeURIComponent(number)}`, json: body, signal, parse: (raw) => PollAnswer.parse(raw) })
      .catch((err: unknown) => {
        // gin answers an unknown route with a plain 404; the endpoint itself never does.
        if (err instanceof HttpError && err.status === 404) {
          throw new ChannelError("unsupported", "this signal-cli-rest-api has no polls (POST /v1/polls needs a newer version)", { cause: err });
        }
        throwBridgeError(err);
      });
    return data.timestamp;
  }

  async about(signal: AbortSignal): Promise<SignalAbout> {
    return (await this.http.requestJson({ path: "/v1/about", signal, parse: (raw) => About.parse(raw) })).data;
  }

  /**
   * `signal-cli receive` for `number`, waiting up to `waitS` seconds: the envelopes it got, as
   * it printed them. The deadline leaves room for the bridge starting signal-cli (a JVM).
   */
  async receive(number: string, waitS: number, signal: AbortSignal): Promise<unknown[]> {
    const path = `/v1/receive/${encodeURIComponent(number)}`;
    const { data } = await this.http
      .requestJson({ path, query: { timeout: waitS }, signal, timeoutMs: waitS * 1000 + 60_000, parse: (raw) => z.array(z.unknown()).parse(raw ?? []) })
      .catch(throwBridgeError);
    return data;
  }

  /** Shows "typing…" to `recipient` (PUT), or hides it (DELETE). */
  async typing(number: string, recipient: string, show: boolean, signal: AbortSignal): Promise<void> {
    const path = `/v1/typing-indicator/${encodeURIComponent(number)}`;
    await this.http.requestJson({ method: show ? "PUT" : "DELETE", path, json: { recipient }, signal }).catch(throwBridgeError);
  }

  /** The numbers registered with (or linked to) the bridge. */
  async accounts(signal: AbortSignal): Promise<string[]> {
    return (await this.http.requestJson({ path: "/v1/accounts", signal, parse: (raw) => Accounts.parse(raw) })).data;
  }
}

/**
 * signal-cli's result types: UNREGISTERED_FAILURE, IDENTITY_FAILURE (the safety number
 * changed), INVALID_PRE_KEY_FAILURE are for good; NETWORK_FAILURE may pass; RATE_LIMIT_FAILURE
 * is Signal's rate limit (lifted by time or a captcha).
 */
function recipientFailure(reason: string, who: string | undefined): ChannelError {
  const message = `signal-cli-rest-api did not deliver to ${who ?? "the recipient"}: ${reason}`;
  const kind = reason === "NETWORK_FAILURE" ? "unavailable" : reason === "RATE_LIMIT_FAILURE" ? "rate_limited" : "rejected";
  return new ChannelError(kind, message, { platformCode: reason });
}
