import type { RunHistoryMessage } from "@gw/contracts";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../providers/model-provider.js";
import { fromRunMessage, pairToolTurns, pendingCalls, toolResultTurn, UNANSWERED_CALL } from "./conversation.js";

const calls = (...ids: string[]) => ids.map((id) => ({ id, name: "get_weather", input: {} }));
const result = (id: string): ChatMessage => ({ role: "tool", toolCallId: id, name: "get_weather", content: `r${id}` });
const wire = (m: Partial<RunHistoryMessage> & { role: string }): RunHistoryMessage => ({
  content: "",
  toolCalls: [],
  toolCallId: "",
  name: "",
  attachments: [],
  ...m,
});

describe("pairToolTurns", () => {
  it("adds a result for each call that has none, after the results that came, and leaves the rest alone", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: "", toolCalls: calls("a", "b") },
      result("a"),
      { role: "user", content: "never mind" },
      { role: "assistant", content: "ok" },
    ];
    expect(pairToolTurns(messages)).toEqual([
      messages[0],
      messages[1],
      result("a"),
      { role: "tool", toolCallId: "b", name: "get_weather", content: UNANSWERED_CALL, isError: true },
      messages[3],
      messages[4],
    ]);
    const whole: ChatMessage[] = [{ role: "assistant", content: "", toolCalls: calls("a") }, result("a")];
    expect(pairToolTurns(whole)).toEqual(whole);
  });

  it("leaves out tool results whose call is not in the assistant turn right before them", () => {
    const messages: ChatMessage[] = [
      // The history began inside an exchange: its call was summarised away.
      result("cut"),
      { role: "user", content: "q" },
      { role: "assistant", content: "", toolCalls: calls("a") },
      result("a"),
      result("a"),
      result("b"),
      { role: "assistant", content: "done" },
      // An answer to call "a" after the turn moved on answers nothing here.
      result("a"),
      { role: "user", content: "next" },
    ];
    expect(pairToolTurns(messages)).toEqual([
      messages[1],
      messages[2],
      result("a"),
      messages[6],
      messages[8],
    ]);
  });
});

describe("pendingCalls", () => {
  it("lists the last assistant turn's calls that no result follows yet", () => {
    expect(pendingCalls([{ role: "user", content: "q" }, { role: "assistant", content: "", toolCalls: calls("a", "b") }, result("a")])).toEqual(calls("b"));
    expect(pendingCalls([{ role: "assistant", content: "", toolCalls: calls("a") }, { role: "user", content: "moved on" }])).toEqual([]);
    expect(pendingCalls([])).toEqual([]);
  });
});

describe("toolResultTurn", () => {
  const callTurn = wire({ role: "assistant", toolCalls: [{ id: "a", name: "get_weather", arguments: '{"city":"Oslo"}' }] });
  const answer = wire({ role: "tool", toolCallId: "a", name: "get_weather", content: "sunny" });

  it("takes only the results when the session ends with those calls unanswered", () => {
    const history: ChatMessage[] = [{ role: "user", content: "q" }, { role: "assistant", content: "", toolCalls: calls("a") }];
    expect(toolResultTurn(history, callTurn, [answer])).toEqual([{ role: "tool", toolCallId: "a", name: "get_weather", content: "sunny" }]);
  });

  it("puts the assistant turn first when the conversation does not hold the calls (stateless, or moved on)", () => {
    expect(toolResultTurn([{ role: "user", content: "q" }], callTurn, [answer])).toEqual([
      { role: "assistant", content: "", toolCalls: [{ id: "a", name: "get_weather", input: { city: "Oslo" } }] },
      { role: "tool", toolCallId: "a", name: "get_weather", content: "sunny" },
    ]);
  });

  it("refuses results for calls the assistant turn did not make, and arguments that are not an object", () => {
    expect(() => toolResultTurn([], callTurn, [wire({ role: "tool", toolCallId: "zz" })])).toThrow(/no tool call zz/);
    expect(() => toolResultTurn([], undefined, [answer])).toThrow(/must follow the assistant message/);
    expect(() => fromRunMessage(wire({ role: "assistant", toolCalls: [{ id: "x", name: "n", arguments: "[1]" }] }))).toThrow(/not a JSON object/);
  });
});
