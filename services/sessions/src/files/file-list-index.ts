import { setImmediate as nextTurn } from "node:timers/promises";
import { MemorySessionIndex } from "../list-index/memory-session-index.js";
import type { PageQuery, SessionPage } from "../list-index/session-index.js";
import type { Slot } from "./file-slots.js";

/** Sessions put in the list index between two turns of the event loop while it is filled at start. */
const INDEX_FILL_CHUNK = 4096;

/**
 * The file store's list index: every metadata change goes in with the next version, in the tick
 * it happens. The sessions loaded at start go in a few thousand at a time, other work running in
 * between: the store serves at once and only `page` waits for the fill (half a second at 100,000
 * sessions). A session written meanwhile goes in with the write and again in the fill as it is
 * then; one deleted meanwhile stays out.
 */
export class FileListIndex {
  private readonly index = new MemorySessionIndex();
  private version = 0;
  private listed: Promise<void> = Promise.resolve();

  /** Starts filling with `loaded`; `current` says whether a slot is still the one its key holds. */
  fill(loaded: Slot[], current: (slot: Slot) => boolean): void {
    this.listed = (async () => {
      for (let i = 0; i < loaded.length; i += INDEX_FILL_CHUNK) {
        await nextTurn();
        for (let j = i; j < Math.min(i + INDEX_FILL_CHUNK, loaded.length); j++) {
          const slot = loaded[j]!;
          if (current(slot)) this.put(slot);
        }
      }
    })();
  }

  /** The slot's metadata changed. */
  put(slot: Slot): void {
    this.index.putNow(slot.meta, ++this.version);
  }

  remove(key: string): Promise<void> {
    return this.index.remove(key, ++this.version);
  }

  async page(query: PageQuery): Promise<SessionPage> {
    await this.listed;
    return this.index.page(query);
  }
}
