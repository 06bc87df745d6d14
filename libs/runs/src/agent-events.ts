import { type Bus, currentRequestId, type RunEventPart, type Subjects } from "@gw/bus";
import {
  type AgentEventPayload,
  type AgentStream,
  type ClientEvent,
  decodeJson,
  encodeClientEvent,
  encodeJson,
  type RunRecord,
  RunRecordSchema,
} from "@gw/contracts";

/**
 * The seq of an event that ends a run from outside its runner (the runner died): larger than
 * any seq the runner can have used, so edges order it last and drop duplicates of it.
 */
export const TERMINAL_SEQ = Number.MAX_SAFE_INTEGER;

/** An `agent` event before it is numbered: what a runner emits. */
export type AgentEventInput = Omit<AgentEventPayload, "seq">;

/** The fields a run's subjects are named after (libs/bus subjects `runEvents`). */
export interface RunAddress {
  runId: string;
  sessionKey: string;
  /** The edge (or service) that started the run; "" for none. */
  edgeId: string;
  /** The run's subjects, worked out once (runEventSubjects) by a publisher that sends many events. */
  subjects?: Readonly<Record<RunEventPart, string>>;
}

/** One message on its way to the bus. */
export interface RunMessage {
  subject: string;
  data: Uint8Array;
}

/** Lifecycle events go where every control connection hears them; the rest only to who asked. */
export function runEventPart(stream: AgentStream): Exclude<RunEventPart, "final"> {
  return stream === "lifecycle" ? "life" : "out";
}

const workOut = (subjects: Subjects, run: RunAddress, part: RunEventPart) =>
  subjects.runEvents({ startedBy: run.edgeId, sessionKey: run.sessionKey, runId: run.runId, part });
const subjectOf = (subjects: Subjects, run: RunAddress, part: RunEventPart) => run.subjects?.[part] ?? workOut(subjects, run, part);

/** A run's three subjects: encoding the session key into a subject token costs more than an event's JSON. */
export function runEventSubjects(subjects: Subjects, run: RunAddress): Readonly<Record<RunEventPart, string>> {
  return { life: workOut(subjects, run, "life"), out: workOut(subjects, run, "out"), final: workOut(subjects, run, "final") };
}

/**
 * An `agent` event as it leaves for the edges: its payload (with `seq`, SPEC §6 fields first)
 * encoded once, here.
 */
export function encodeAgentEvent(payload: AgentEventInput, meta: { sessionKey: string; seq: number }): Uint8Array {
  const numbered: AgentEventPayload = { runId: payload.runId, seq: meta.seq, stream: payload.stream, data: payload.data };
  return encodeClientEvent({
    event: "agent",
    payload: encodeJson(numbered),
    sessionKey: meta.sessionKey,
    runId: payload.runId,
    seq: meta.seq,
  });
}

/** The event, on the subject of its part. */
export function agentEventMessage(subjects: Subjects, run: RunAddress, payload: AgentEventInput, seq: number): RunMessage {
  return { subject: subjectOf(subjects, run, runEventPart(payload.stream)), data: encodeAgentEvent(payload, { sessionKey: run.sessionKey, seq }) };
}

/**
 * The run's recorded outcome with its terminal event, on the run's `final` subject: only the
 * edges (and services) waiting on the run subscribe to it, so the record is never copied onto
 * the lifecycle event every control edge receives. It leaves just before that terminal event.
 */
export function finalRecordMessage(subjects: Subjects, run: RunAddress, terminal: AgentEventInput, seq: number, final: RunRecord): RunMessage {
  const numbered: AgentEventPayload = { runId: terminal.runId, seq, stream: terminal.stream, data: terminal.data };
  return {
    subject: subjectOf(subjects, run, "final"),
    data: encodeClientEvent({
      event: "agent",
      payload: encodeJson(numbered),
      sessionKey: run.sessionKey,
      runId: run.runId,
      seq,
      finalRecordJson: Buffer.from(JSON.stringify(final), "utf8"),
    }),
  };
}

/** The messages of a terminal event that carries the run's record: the record first, then the event. */
export function terminalMessages(subjects: Subjects, run: RunAddress, terminal: AgentEventInput, seq: number, final: RunRecord): RunMessage[] {
  return [finalRecordMessage(subjects, run, terminal, seq, final), agentEventMessage(subjects, run, terminal, seq)];
}

/**
 * Ends a run on behalf of a runner that cannot (it died, nobody took the run in time, or it
 * could not be dispatched), as the runner would have: a lifecycle `error` with TERMINAL_SEQ
 * (and the id of the request it is ended in, if any), and `final` (the recorded error) to those
 * waiting on it.
 */
export function publishRunEnd(bus: Bus, subjects: Subjects, final: RunRecord, code: string, message: string): void {
  const requestId = currentRequestId();
  const data = { phase: "error", error: message, code, ...(requestId === undefined ? {} : { requestId }) };
  const terminal: AgentEventInput = { runId: final.runId, stream: "lifecycle", data };
  for (const m of terminalMessages(subjects, final, terminal, TERMINAL_SEQ, final)) bus.publish(m.subject, m.data);
}

/** The final record a `final` message carries, or undefined. */
export function finalRecordOf(event: ClientEvent): RunRecord | undefined {
  if (event.finalRecordJson.length === 0) return undefined;
  return decodeJson(event.finalRecordJson, RunRecordSchema, "final run record on the bus");
}

export function isTerminalEvent(payload: Pick<AgentEventPayload, "stream" | "data">): boolean {
  return payload.stream === "lifecycle" && (payload.data.phase === "end" || payload.data.phase === "error");
}
