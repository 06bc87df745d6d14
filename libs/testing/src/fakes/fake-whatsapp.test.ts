import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_WHATSAPP_NUMBERS, type FakeWhatsApp, startFakeWhatsApp } from "./fake-whatsapp.js";

const [one, two] = DEFAULT_WHATSAPP_NUMBERS;

describe("fake WhatsApp Cloud API", () => {
  let wa: FakeWhatsApp;
  const send = async (body: unknown, number = one!) => {
    const res = await fetch(`${wa.baseUrl}/${number.phoneNumberId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${number.accessToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  beforeAll(async () => {
    wa = await startFakeWhatsApp({ allowedRecipients: ["+15557654321"] });
  });
  afterAll(() => wa.close());
  beforeEach(() => wa.reset());

  it("puts the Graph API version in its base URL", () => {
    expect(wa.baseUrl).toMatch(/\/v21\.0$/);
  });

  it("sends text as a reply and answers a wamid", async () => {
    const { status, body } = await send({ messaging_product: "whatsapp", to: "+15557654321", type: "text", text: { body: "hi" }, context: { message_id: "wamid.prev" } });
    expect(status).toBe(200);
    expect(body).toMatchObject({ messaging_product: "whatsapp", contacts: [{ input: "+15557654321", wa_id: "15557654321" }] });
    const id = (body.messages as Array<{ id: string }>)[0]!.id;
    expect(id).toMatch(/^wamid\./);
    expect(wa.delivered).toEqual([{ id, account: one!.phoneNumberId, chat: "15557654321", text: "hi", media: [], threadId: "wamid.prev" }]);
  });

  it("sends media by link with a caption", async () => {
    await send({ messaging_product: "whatsapp", to: "15557654321", type: "document", document: { link: "https://cdn.example/r.pdf", filename: "r.pdf", caption: "report" } });
    expect(wa.delivered[0]).toMatchObject({ text: "report", media: [{ url: "https://cdn.example/r.pdf", kind: "document", filename: "r.pdf" }] });
  });

  it("answers the phone-number object, field by field", async () => {
    const res = await fetch(`${wa.baseUrl}/${two!.phoneNumberId}?fields=display_phone_number,quality_rating`, { headers: { authorization: `Bearer ${two!.accessToken}` } });
    expect(await res.json()).toEqual({ display_phone_number: "+1 555-000-2222", quality_rating: "GREEN", id: two!.phoneNumberId });
  });

  it("refuses with Graph API errors", async () => {
    const wrongToken = await fetch(`${wa.baseUrl}/${one!.phoneNumberId}/messages`, { method: "POST", headers: { authorization: "Bearer nope" } });
    expect(wrongToken.status).toBe(401);
    expect(await wrongToken.json()).toMatchObject({ error: { type: "OAuthException", code: 190 } });
    const otherNumber = await fetch(`${wa.baseUrl}/${two!.phoneNumberId}/messages`, { method: "POST", headers: { authorization: `Bearer ${one!.accessToken}` } });
    expect(await otherNumber.json()).toMatchObject({ error: { code: 100, error_subcode: 33 } });
    expect((await send({ to: "15557654321", type: "text", text: { body: "x" } })).body).toMatchObject({ error: { code: 100, message: "(#100) The parameter messaging_product is required." } });
    expect((await send({ messaging_product: "whatsapp", to: "15550000000", type: "text", text: { body: "x" } })).body).toMatchObject({ error: { code: 131030 } });
    expect((await send({ messaging_product: "whatsapp", to: "15557654321", type: "text", text: { body: "x".repeat(4097) } })).status).toBe(400);
    expect((await send({ messaging_product: "whatsapp", to: "15557654321", type: "image", image: { link: "not a url" } })).status).toBe(400);
    expect(wa.delivered).toHaveLength(0);
  });

  it("scripts Meta's failure forms", async () => {
    wa.next({ kind: "rate_limit", retryAfterSeconds: 4 });
    wa.next({ kind: "reject", reason: "(#131047) Re-engagement message" });
    const limited = await send({ messaging_product: "whatsapp", to: "15557654321", type: "text", text: { body: "x" } });
    expect(limited).toMatchObject({ status: 429, body: { error: { code: 130429, message: "(#130429) Rate limit hit" } } });
    const rejected = await send({ messaging_product: "whatsapp", to: "15557654321", type: "text", text: { body: "x" } });
    expect(rejected).toMatchObject({ status: 400, body: { error: { message: "(#131047) Re-engagement message", fbtrace_id: expect.any(String) } } });
  });
});
