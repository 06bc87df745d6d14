import { encodeMessage, RunRequest } from "@gw/contracts";
import { decodeRunRequest } from "@gw/runs";
import type { DurableKv } from "@gw/store";

export interface DeferredRun {
  key: string;
  request: RunRequest;
}

/**
 * Agent hooks with `wakeMode: "next-heartbeat"`: the planned run (runId and nonce fixed at
 * acceptance), stored durably until the next heartbeat dispatches it. Keys sort by acceptance.
 */
export class DeferredRuns {
  constructor(private readonly kv: DurableKv) {}

  async add(request: RunRequest): Promise<void> {
    await this.kv.create(`${String(request.acceptedAt).padStart(15, "0")}-${request.runId}`, encodeMessage(RunRequest, request));
  }

  /** In acceptance order. An entry that cannot be decoded is dropped, rather than block every heartbeat after it. */
  async list(): Promise<DeferredRun[]> {
    const keys = (await this.kv.keys()).sort();
    const runs: DeferredRun[] = [];
    for (const key of keys) {
      const entry = await this.kv.get(key);
      if (entry === null) continue;
      try {
        runs.push({ key, request: decodeRunRequest(entry.value) });
      } catch {
        await this.kv.delete(key);
      }
    }
    return runs;
  }

  async remove(key: string): Promise<void> {
    await this.kv.delete(key);
  }
}
