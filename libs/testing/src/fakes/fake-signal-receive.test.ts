import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_SIGNAL_ACCOUNTS, type FakeSignal, startFakeSignal } from "./fake-signal.js";

const [account] = DEFAULT_SIGNAL_ACCOUNTS;

describe("fake signal-cli-rest-api: receive and typing", () => {
  let signal: FakeSignal | undefined;
  afterEach(() => signal?.close());
  const receive = async (query = "timeout=1", number = account!) => {
    const res = await fetch(`${signal!.baseUrl}/v1/receive/${encodeURIComponent(number)}?${query}`);
    return { status: res.status, body: (await res.json().catch(() => undefined)) as unknown };
  };

  it("hands out queued envelopes once, as signal-cli prints them", async () => {
    signal = await startFakeSignal({ mode: "native" });
    const { timestamp } = signal.userWrites({ from: "+15557770000", text: "hi", mentions: [account!], groupId: "Z3JvdXA=" });
    const { status, body } = await receive();
    expect(status).toBe(200);
    expect(body).toEqual([
      {
        account,
        envelope: expect.objectContaining({
          sourceNumber: "+15557770000",
          timestamp,
          dataMessage: expect.objectContaining({
            message: "\uFFFC hi",
            mentions: [expect.objectContaining({ number: account, start: 0, length: 1 })],
            groupInfo: expect.objectContaining({ groupId: "Z3JvdXA=" }),
          }),
        }),
      },
    ]);
    expect((await receive("timeout=0")).body).toEqual([]);
  });

  it("waits up to the timeout for a message, and answers as soon as one comes", async () => {
    signal = await startFakeSignal({ mode: "normal" });
    // Waiting out the 60 s timeout would outlast the test's own: answering at once is what passes.
    const waiting = receive("timeout=60");
    await new Promise((r) => setTimeout(r, 200));
    expect(signal.receiveStats.active).toBe(1);
    signal.userWrites({ from: "+15557770000", text: "now" });
    expect(((await waiting).body as unknown[]).length).toBe(1);
  });

  it("refuses a plain GET in json-rpc mode, a bad timeout and an unknown account", async () => {
    signal = await startFakeSignal();
    expect((await receive()).status).toBe(400);
    await signal.close();
    signal = await startFakeSignal({ mode: "native" });
    expect(await receive("timeout=soon")).toEqual({ status: 400, body: { error: "Couldn't process request - timeout needs to be numeric!" } });
    expect((await receive("timeout=0", "+15550000000")).status).toBe(400);
  });

  it("records typing indicators", async () => {
    signal = await startFakeSignal({ mode: "native" });
    const put = await fetch(`${signal.baseUrl}/v1/typing-indicator/${encodeURIComponent(account!)}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ recipient: "+15557770000" }) });
    expect(put.status).toBe(204);
    expect(signal.typing).toEqual([{ method: "PUT", account, recipient: "+15557770000" }]);
  });
});
