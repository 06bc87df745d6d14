import { describe, expect, it } from "vitest";
import { inboundMessage } from "../../../test/inbound-fixtures.js";
import type { QueuedMessage, SessionQueue } from "../store/inbound-store.js";
import { capTurn, endTurn, inboxEntryOf, markInterrupt, markSteer, planTurn, runningTurn, summaryNote, turnRunId, untouched } from "./pending-queue.js";

const item = (id: string, over: Partial<QueuedMessage> = {}): QueuedMessage => ({ message: inboundMessage(id), receivedAt: Number(id), ...over });
const queueOf = (...items: QueuedMessage[]): SessionQueue => ({ channelId: "tg", accountId: "default", sessionKey: "tg:42", items });
const ids = (q: SessionQueue | undefined) => q?.items.map((i) => i.message.eventId);
const R1 = "in:tg:default:1";

describe("planTurn", () => {
  it("followup: the first message alone, untagged, named by its event", () => {
    const planned = planTurn(queueOf(item("1"), item("2")), "followup");
    expect(planned).toEqual({ turn: { runId: R1, items: [item("1")] } });
  });

  it("collect, steer, interrupt: every message waiting, tagged with the turn's run id", () => {
    for (const mode of ["collect", "steer", "interrupt"] as const) {
      const planned = planTurn(queueOf(item("1"), item("2"), item("3")), mode)!;
      expect(planned.turn.runId).toBe(R1);
      expect(planned.turn.items.map((i) => i.message.eventId)).toEqual(["1", "2", "3"]);
      expect(planned.tagged!.items.every((i) => i.turn === R1)).toBe(true);
      expect(runningTurn(planned.tagged!)).toEqual(planned.turn);
    }
  });

  it("a message whose turns were interrupted names a new run each time", () => {
    expect(turnRunId(queueOf(), item("1", { tries: 2 }))).toBe(`${R1}~2`);
    expect(planTurn(queueOf(), "collect")).toBeUndefined();
  });
});

describe("steer and interrupt marks", () => {
  const running = queueOf(item("1", { turn: R1 }), item("2"), item("3", { steer: R1 }));

  it("steer hands only untouched messages to the running turn, once", () => {
    const marked = markSteer(running, R1)!;
    expect(marked.items.map((i) => i.steer)).toEqual([undefined, R1, R1]);
    expect(untouched(marked)).toEqual([]);
    expect(markSteer(marked, R1)).toBeUndefined();
    // Not the running turn (it ended meanwhile): nothing to do.
    expect(markSteer(running, "in:tg:default:9")).toBeUndefined();
  });

  it("steer stops at a message with a file: it waits for a turn of its own, and those after it too", () => {
    const photo = item("3", { message: { ...inboundMessage("3"), attachments: [{ kind: "image", id: "f1" }] } });
    const queue = queueOf(item("1", { turn: R1 }), item("2"), photo, item("4"));
    expect(markSteer(queue, R1)!.items.map((i) => i.steer)).toEqual([undefined, R1, undefined, undefined]);
    expect(markSteer(queueOf(item("1", { turn: R1 }), photo, item("4")), R1)).toBeUndefined();
  });

  it("interrupt names the running turn once, only with a newer message waiting", () => {
    const marked = markInterrupt(running, R1)!;
    expect(marked.interrupt).toBe(R1);
    expect(markInterrupt(marked, R1)).toBeUndefined();
    expect(markInterrupt(queueOf(item("1", { turn: R1 })), R1)).toBeUndefined();
  });
});

describe("endTurn", () => {
  const running = queueOf(item("1", { turn: R1 }), item("2", { turn: R1 }), item("3", { steer: R1 }), item("4", { steer: R1 }), item("5"));

  it("removes the turn's messages and the handed ones its run read; the rest wait, untagged", () => {
    const ended = endTurn(running, { runId: R1, eventIds: ["1", "2"], steered: new Set(["3"]), interrupted: false })!;
    expect(ids(ended)).toEqual(["4", "5"]);
    expect(ended.items.every((i) => i.turn === undefined && i.steer === undefined)).toBe(true);
  });

  it("an interrupted turn's messages stay in front, counted, and the mark goes", () => {
    const ended = endTurn({ ...running, interrupt: R1 }, { runId: R1, eventIds: ["1", "2"], steered: new Set(["3"]), interrupted: true })!;
    expect(ids(ended)).toEqual(["1", "2", "3", "4", "5"]);
    expect(ended.items.map((i) => i.tries)).toEqual([1, 1, undefined, undefined, undefined]);
    expect(ended.interrupt).toBeUndefined();
    expect(runningTurn(ended)).toBeUndefined();
    // The next turn takes all five under a run id of its own.
    expect(planTurn(ended, "interrupt")!.turn).toMatchObject({ runId: `${R1}~1` });
  });

  it("answers undefined when the turn is already gone (a second writer got there first)", () => {
    expect(endTurn(queueOf(item("5")), { runId: R1, eventIds: ["1"], steered: new Set(), interrupted: false })).toBeUndefined();
  });
});

describe("capTurn and summaryNote", () => {
  const texts = ["a", "b", "c", "d", "e"];

  it("within the cap everything is input", () => {
    expect(capTurn(texts, { cap: 5, drop: "oldest" }, (t) => t)).toEqual({ left: [], input: texts });
  });

  it("oldest: the older ones are left out of the input", () => {
    expect(capTurn(texts, { cap: 2, drop: "oldest" }, (t) => t)).toEqual({ left: ["a", "b", "c"], input: ["d", "e"] });
  });

  it("summarize: the older ones become one note of their first words", () => {
    const long = "one two three four five six seven eight nine ten";
    const split = capTurn([long, "x", "y"], { cap: 2, drop: "summarize" }, (t) => t);
    expect(split).toEqual({ left: [long], input: ["x", "y"], note: '[1 earlier message: "one two three four five six seven eight…"]' });
    expect(summaryNote(["where is  my order", "thanks"])).toBe('[2 earlier messages: "where is my order"; "thanks"]');
  });

  it("an inbox entry carries the message's text as the agent reads it, its sender and arrival", () => {
    const group = item("7", { message: inboundMessage("7", { chatType: "group", senderName: "Ada", text: "hi" }) });
    expect(inboxEntryOf(group, "steer")).toEqual({ id: "7", kind: "steer", text: "Ada: hi", sender: "Ada", at: 7 });
  });
});
