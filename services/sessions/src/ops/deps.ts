import type { AgentCatalog } from "../agents.js";
import type { EncodedPreviews } from "./encoded-previews.js";
import type { SessionRepository } from "../repository.js";
import type { SessionEvents } from "../session-events.js";
import type { SessionMeta, StoredEntry } from "../model.js";

/**
 * Writes the summary that replaces `older` entries when a session is compacted, by `deadline`
 * (the caller's, ms since the epoch) at the latest.
 */
export type Summarizer = (meta: SessionMeta, older: StoredEntry[], deadline: number) => Promise<string>;

/** What every sessions handler is given; one object, built once by the composition root. */
export interface SessionsDeps {
  repo: SessionRepository;
  events: SessionEvents;
  agents: AgentCatalog;
  summarize: Summarizer;
  /** This process's encoded preview payloads, reused while a session is unchanged. */
  previews: EncodedPreviews;
  now: () => number;
  newId: () => string;
}
