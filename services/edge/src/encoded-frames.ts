import { type EncodedJson, type FrameId, spliceJson } from "@gw/contracts";

/**
 * Frames around a payload that is EncodedJson already (a preview answer, an event's payload):
 * the payload's bytes go in as they came, so a frame costs one buffer and no JSON work, and
 * every socket an event reaches sends that one buffer. The object frames (answers built here,
 * errors) are in ws/frames.ts. Both the sockets and the event fan-out write these frames.
 */

const CLOSE = Buffer.from("}");

/** Frame heads by event name: a handful of names, each encoded once (bounded against junk). */
const EVENT_HEADS = new Map<string, Buffer>();
const MAX_EVENT_HEADS = 64;

/** `{"event":<event>,"payload":<payload>}` (SPEC §1 event frame). */
export function encodedEventFrame(event: string, payload: EncodedJson<unknown>): Buffer {
  let head = EVENT_HEADS.get(event);
  if (head === undefined) {
    head = Buffer.from(`{"event":${JSON.stringify(event)},"payload":`, "utf8");
    if (EVENT_HEADS.size < MAX_EVENT_HEADS) EVENT_HEADS.set(event, head);
  }
  return spliceJson(head, payload, CLOSE);
}

/** `{"id":<id>,"ok":true,"payload":<payload>}` (SPEC §1 success response). */
export function encodedSuccessFrame(id: FrameId, payload: EncodedJson<unknown>): Buffer {
  return spliceJson(`{"id":${JSON.stringify(id)},"ok":true,"payload":`, payload, CLOSE);
}
