import type { Logger } from "@gw/runtime";
import type { DurableStore, FastStore } from "@gw/store";
import type { ChannelDirectory } from "../../channel-directory.js";
import { StatusBook } from "../../status-book.js";
import { AccountReceiver, DEFAULT_RECEIVER_TIMING, type ReceiverTiming } from "./account-receiver.js";
import { ReceiverCursors } from "./receiver-cursors.js";
import type { InboundSink } from "../store/sink.js";

export interface ReceiversDeps {
  directory: ChannelDirectory;
  sink: InboundSink;
  fastStore: FastStore;
  durable: DurableStore;
  logger: Logger;
  /** Names this replica in lease holders and logs. */
  replicaId: string;
  /** Lease, retry and backoff periods (tests shorten them). */
  timing?: Partial<ReceiverTiming>;
}

export interface Receivers {
  /** The accounts that have a receiver, as `<channelId>:<accountId>`. */
  readonly accounts: readonly string[];
  /** Stops every receiver and releases the leases this replica holds. */
  stop(): Promise<void>;
}

/**
 * Starts, on this replica, a contender for every account whose adapter has a receiver (polling
 * and gateway platforms whose settings enable it: Telegram `inbound: "polling"`, Discord,
 * Signal). Whichever replica holds an account's lease reads it; the others wait to take over.
 * Each account runs on its own: one failing never touches another.
 */
export async function startReceivers(deps: ReceiversDeps): Promise<Receivers> {
  const cursors = await ReceiverCursors.open(deps.durable);
  const status = new StatusBook(deps.fastStore, deps.logger);
  const timing = { ...DEFAULT_RECEIVER_TIMING, ...deps.timing };
  const stop = new AbortController();
  const running: Array<Promise<void>> = [];
  const accounts: string[] = [];
  for (const entry of deps.directory.list()) {
    for (const account of entry.accounts) {
      const receiver = account.adapter.inbound?.receiver;
      if (receiver === undefined) continue;
      const origin = { channelId: account.channelId, accountId: account.accountId };
      const contender = new AccountReceiver({
        origin,
        receiver,
        sink: deps.sink,
        leases: deps.fastStore.leases,
        cursors,
        status,
        logger: deps.logger,
        replicaId: deps.replicaId,
        timing,
      });
      accounts.push(`${origin.channelId}:${origin.accountId}`);
      running.push(
        contender.run(stop.signal).catch((err: unknown) => {
          // run() catches every failure of its own; this is a bug, and must not end the others.
          deps.logger.error({ err, channel: origin.channelId, account: origin.accountId }, "inbound receiver crashed");
        }),
      );
    }
  }
  if (accounts.length > 0) deps.logger.info({ accounts }, "inbound receivers contending for their leases");
  return {
    accounts,
    async stop() {
      stop.abort(new Error("delivery is stopping"));
      await Promise.all(running);
      await status.settled();
    },
  };
}
