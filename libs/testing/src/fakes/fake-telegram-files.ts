/**
 * Files people send to a bot, as the fake Bot API keeps them: a photo (in two sizes, the last
 * the largest, as Telegram sends them) or a document in a message, `getFile` answering the
 * file's `file_path`, and the download at `/file/bot<token>/<file_path>`.
 */
import type { FakeReply } from "./platform-fake.js";

/** A file a person sends with a message (`userWrites`'s `file`). */
export interface FakeTelegramFile {
  kind: "photo" | "document";
  bytes: Uint8Array;
  /** A document's MIME type and name (photos are JPEG). */
  mimeType?: string;
  name?: string;
  /** The size the update states; default the bytes' length (a lie tests a download's own limit). */
  statedSize?: number;
}

interface Stored {
  bytes: Uint8Array;
  path: string;
  mimeType: string;
}

const ok = (result: unknown): FakeReply => ({ status: 200, json: { ok: true, result } });
const badRequest = (description: string): FakeReply => ({ status: 400, json: { ok: false, error_code: 400, description: `Bad Request: ${description}` } });

export class TelegramFiles {
  private readonly files = new Map<string, Stored>();
  private next = 1;
  /** Every file path downloaded, in order (a retry that fetches again shows twice). */
  readonly downloads: string[] = [];

  /** Keeps the file and answers the message fields that carry it (`photo` sizes, or `document`). */
  messageFields(file: FakeTelegramFile): Record<string, unknown> {
    const n = this.next++;
    const fileId = `AgACfake${n}`;
    const mimeType = file.kind === "photo" ? "image/jpeg" : (file.mimeType ?? "application/octet-stream");
    const path = file.kind === "photo" ? `photos/file_${n}.jpg` : `documents/${file.name ?? `file_${n}`}`;
    this.files.set(fileId, { bytes: file.bytes, path, mimeType });
    const size = file.statedSize ?? file.bytes.byteLength;
    const unique = `AQADfake${n}`;
    if (file.kind === "photo") {
      const thumb = { file_id: `${fileId}thumb`, file_unique_id: `${unique}t`, width: 90, height: 90, file_size: 1_000 };
      return { photo: [thumb, { file_id: fileId, file_unique_id: unique, width: 1280, height: 960, file_size: size }] };
    }
    return { document: { file_id: fileId, file_unique_id: unique, file_name: file.name ?? `file_${n}`, mime_type: mimeType, file_size: size } };
  }

  /** `getFile`: the file's path for the download. */
  getFile(fileId: unknown): FakeReply {
    const file = typeof fileId === "string" ? this.files.get(fileId) : undefined;
    if (file === undefined) return badRequest("invalid file_id");
    return ok({ file_id: fileId, file_unique_id: `u${String(fileId)}`, file_size: file.bytes.byteLength, file_path: file.path });
  }

  /** `GET /file/bot<token>/<path>`: the bytes, with the type a real file server gives. */
  download(path: string): FakeReply {
    const file = [...this.files.values()].find((f) => f.path === path);
    if (file === undefined) return { status: 404, text: "Not Found" };
    this.downloads.push(path);
    return { status: 200, headers: { "content-type": file.mimeType }, bytes: file.bytes };
  }
}
