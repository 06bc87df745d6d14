import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import { fsyncDir, TEMP_SUFFIX, writeFileAtomic } from "./atomic-write.js";
import { checkKey, checkRevision, conflict } from "./durable-args.js";
import type { DurableKv, KvEntry } from "./durable-store.js";
import { decodeRecord, encodeRecord, readHeader } from "./file-record.js";
import { fileNameForKey, keyFromFileName } from "./key-codec.js";
import { KeyedMutex } from "./keyed-mutex.js";

/** Highest revision ever handed out, kept across deletes (see FileKv.delete). */
const SEQ_FILE = ".seq";

const sha256Hex = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === "ENOENT";
}

/** One bucket as a directory of files; revisions are bucket-wide, like a JetStream stream sequence. */
export class FileKv implements DurableKv {
  private readonly locks = new KeyedMutex();

  private constructor(
    private readonly dir: string,
    private revision: number,
    private readonly isOpen: () => void,
  ) {}

  /** Creates the directory, drops temp files a crash left behind and recovers the revision. */
  static async open(dir: string, isOpen: () => void): Promise<FileKv> {
    await mkdir(dir, { recursive: true });
    let revision = 0;
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      if (name.startsWith(".") && name.endsWith(TEMP_SUFFIX)) await rm(path, { force: true });
      else if (name === SEQ_FILE)
        revision = Math.max(revision, Number((await readFile(path, "utf8")).trim()) || 0);
      else if (!name.startsWith(".")) revision = Math.max(revision, (await readHeader(path)).revision);
    }
    return new FileKv(dir, revision, isOpen);
  }

  async get(key: string): Promise<KvEntry | null> {
    this.isOpen();
    checkKey(key);
    const path = this.pathFor(key);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    const record = decodeRecord(bytes, path);
    return record.key === key ? { value: record.value, revision: record.revision } : null;
  }

  put(key: string, value: Uint8Array): Promise<number> {
    return this.locked(key, () => this.write(key, value));
  }

  create(key: string, value: Uint8Array): Promise<number> {
    return this.locked(key, async () => {
      if ((await this.get(key)) !== null) throw conflict(`key already exists: ${key}`);
      return this.write(key, value);
    });
  }

  update(key: string, value: Uint8Array, expectedRevision: number): Promise<number> {
    return this.locked(key, async () => {
      checkRevision(expectedRevision);
      const current = await this.get(key);
      if (current?.revision !== expectedRevision) {
        throw conflict(
          `revision mismatch for ${key}: expected ${expectedRevision}, found ${current?.revision ?? "none"}`,
        );
      }
      return this.write(key, value);
    });
  }

  delete(key: string, expectedRevision?: number): Promise<void> {
    return this.locked(key, async () => {
      if (expectedRevision !== undefined) {
        checkRevision(expectedRevision);
        const current = await this.get(key);
        if (current?.revision !== expectedRevision) {
          throw conflict(`revision mismatch for ${key}: expected ${expectedRevision}, found ${current?.revision ?? "none"}`);
        }
      }
      // The deleted file may have held the highest revision; record it first so a reopened
      // store never hands that revision out again (a stale update() would then succeed).
      await writeFileAtomic(join(this.dir, SEQ_FILE), Buffer.from(String(this.revision)));
      try {
        await unlink(this.pathFor(key));
      } catch (err) {
        if (!isMissing(err)) throw err;
        return;
      }
      await fsyncDir(this.dir);
    });
  }

  async keys(): Promise<string[]> {
    this.isOpen();
    const keys: string[] = [];
    for (const name of await readdir(this.dir)) {
      if (name.startsWith(".")) continue;
      const plain = keyFromFileName(name);
      if (plain !== undefined) keys.push(plain);
      else if (name.startsWith("~")) keys.push(await this.hashedKey(name));
    }
    return keys.sort();
  }

  private async hashedKey(name: string): Promise<string> {
    return (await readHeader(join(this.dir, name))).key;
  }

  private pathFor(key: string): string {
    return join(this.dir, fileNameForKey(key, sha256Hex));
  }

  private async write(key: string, value: Uint8Array): Promise<number> {
    this.revision += 1;
    const revision = this.revision;
    await writeFileAtomic(this.pathFor(key), encodeRecord({ key, revision, value }));
    return revision;
  }

  private locked<T>(key: string, work: () => Promise<T>): Promise<T> {
    try {
      this.isOpen();
      checkKey(key);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.locks.run(key, work);
  }
}
