import type { InboxEntry } from "@gw/contracts";
import type { RunInbox } from "@gw/runs";
import type { ChatMessage } from "../providers/model-provider.js";

/**
 * What a run reads of its inbox (libs/runs run-inbox.ts) as it goes: before each model call the
 * steer messages handed over since the last look, as one user message after the tool results
 * (the model answers with them in mind); `context` messages are kept for the session, before the
 * run's own message, and never shown to the model. `steered` is what the run's record reports as
 * read: only what reached a model call.
 */
export class InboxReader {
  private readonly seen = new Set<string>();
  readonly steered: string[] = [];
  readonly context: InboxEntry[] = [];

  constructor(
    private readonly inbox: Pick<RunInbox, "read">,
    private readonly runId: string,
  ) {}

  /** The steer messages not read yet, joined into one user message; undefined when there are none. */
  async next(): Promise<ChatMessage | undefined> {
    const fresh = (await this.inbox.read(this.runId)).filter((entry) => !this.seen.has(entry.id));
    const texts: string[] = [];
    for (const entry of fresh) {
      this.seen.add(entry.id);
      if (entry.kind === "context") this.context.push(entry);
      else {
        this.steered.push(entry.id);
        texts.push(entry.text);
      }
    }
    return texts.length === 0 ? undefined : { role: "user", content: texts.join("\n\n") };
  }
}
