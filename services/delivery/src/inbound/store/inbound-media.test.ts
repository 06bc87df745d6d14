import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChannelError, type FetchedFile, type InboundAttachment, type InboundFiles } from "@gw/channels";
import { createFileDurableStore, type DurableKv, type DurableStore } from "@gw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inboundMessage } from "../../../test/inbound-fixtures.js";
import { turnText } from "./conversation.js";
import { InboundMedia } from "./inbound-media.js";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const photo: InboundAttachment = { kind: "image", mimeType: "image/jpeg", size: PNG.byteLength, id: "f1" };
const signal = new AbortController().signal;

/** Files served from a table, counting fetches. */
class TableFiles implements InboundFiles {
  readonly fetched: string[] = [];
  constructor(private readonly table: Record<string, FetchedFile | Error>) {}
  async fetch(a: InboundAttachment): Promise<FetchedFile> {
    this.fetched.push(a.id ?? "");
    const answer = this.table[a.id ?? ""];
    if (answer === undefined || answer instanceof Error) throw answer ?? new Error("no such file");
    return answer;
  }
}

let dir: string;
let durable: DurableStore;
let kv: DurableKv;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "inbound-media-"));
  durable = await createFileDurableStore(dir);
  kv = await durable.kv("delivery_media");
});
afterEach(() => durable.close());

const media = (textOnly?: string) => new InboundMedia({ kv, maxBytes: 1_000, textOnlyModel: () => textOnly });

describe("InboundMedia", () => {
  it("fetches a turn's images once: a turn taken up again reads them from the store, until the run has ended", async () => {
    const files = new TableFiles({ f1: { kind: "file", bytes: PNG, mimeType: "application/octet-stream" } });
    const msg = inboundMessage("7", { text: "see", attachments: [photo] });
    const first = await media().prepare(files, "main", "run-7", [msg], signal);
    // The bytes say PNG, whatever the platform called it.
    expect(first).toEqual({ images: [{ type: "image", mimeType: "image/png", data: PNG.toString("base64") }], fetched: new Set(["7#0"]) });
    // Another process (after a crash) takes the turn up: it reads the images, fetches nothing.
    const after = media();
    expect(await after.prepare(files, "main", "run-7", [msg], signal)).toEqual(first);
    expect(files.fetched).toEqual(["f1"]);
    expect(turnText(msg, "fetched" in first ? first.fetched : new Set())).toBe("see");
    // A turn without images deletes nothing; the one that read the record deletes it.
    await media().forget("run-7");
    expect(await kv.keys()).toHaveLength(1);
    await after.forget("run-7");
    expect(await kv.keys()).toEqual([]);
  });

  it("refuses a non-image, an oversize file and bytes that are no image, keeping nothing", async () => {
    const files = new TableFiles({ big: { kind: "too_large" }, html: { kind: "file", bytes: Buffer.from("<html>"), mimeType: "image/png" } });
    const cases: Array<[InboundAttachment, RegExp]> = [
      [{ kind: "document", name: "a.pdf", mimeType: "application/pdf", id: "pdf" }, /"a\.pdf" is not one/],
      [{ kind: "image", mimeType: "image/tiff", id: "tiff" }, /the image is not one/],
      [{ kind: "image", size: 5_000, id: "huge" }, /is 4 KB/],
      [{ kind: "image", id: "big" }, /is larger/],
      [{ kind: "image", id: "html" }, /is not one/],
    ];
    for (const [attachment, reply] of cases) {
      const outcome = await media().prepare(files, "main", "run-x", [inboundMessage("1", { attachments: [attachment] })], signal);
      expect(outcome).toEqual({ refusal: expect.stringMatching(reply) });
    }
    expect(files.fetched).toEqual(["big", "html"]);
    expect(await kv.keys()).toEqual([]);
  });

  it("a file the platform refuses is refused; a platform that fails is tried again", async () => {
    const files = new TableFiles({ gone: new ChannelError("rejected", "file is gone"), down: new ChannelError("unavailable", "502") });
    const refused = await media().prepare(files, "main", "r1", [inboundMessage("1", { attachments: [{ kind: "image", id: "gone" }] })], signal);
    expect(refused).toEqual({ refusal: expect.stringMatching(/could not fetch/) });
    await expect(media().prepare(files, "main", "r2", [inboundMessage("1", { attachments: [{ kind: "image", id: "down" }] })], signal)).rejects.toThrow("502");
  });

  it("leaves files described in text where the agent reads no images or the platform cannot fetch them", async () => {
    const files = new TableFiles({});
    const msg = inboundMessage("1", { attachments: [photo] });
    expect(await media("openai/text").prepare(files, "main", "r", [msg], signal)).toEqual({ images: [], fetched: new Set() });
    expect(await media().prepare(undefined, "main", "r", [msg], signal)).toEqual({ images: [], fetched: new Set() });
    expect(files.fetched).toEqual([]);
    expect(turnText(msg)).toContain("[attachment: image, image/jpeg");
  });
});
