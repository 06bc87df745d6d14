import { callRpc } from "@gw/bus";
import { type ChannelsStatusResponse, type ChannelsSummary, isGatewayError, RPC, type ServiceProbe } from "@gw/contracts";
import type { BusDeps } from "../bus-deps.js";

/** Short: a service that does not answer a read within this is not ready for anyone else either. */
const PROBE_TIMEOUT_MS = 3_000;

/** One service as `gateway.status` saw it: answering, or why not (the error code and message). */
async function probe<T>(service: ServiceProbe["service"], call: () => Promise<T>): Promise<{ probe: ServiceProbe; answer?: T }> {
  try {
    return { probe: { service, ready: true, error: null }, answer: await call() };
  } catch (err) {
    const error = isGatewayError(err) ? `${err.code}: ${err.message}` : `INTERNAL: ${(err as Error).message}`;
    return { probe: { service, ready: false, error } };
  }
}

/**
 * Asks each service that answers bus requests a read with no effect: the runner the agent list,
 * sessions one page of one session, delivery its channels' status (kept for the summary). With
 * nobody serving a subject the bus answers UNAVAILABLE at once, so a missing service costs no
 * wait; a stuck one costs at most PROBE_TIMEOUT_MS. The hooks service serves only requests that
 * act (wake, run), so it is not probed.
 */
export async function probeServices(deps: BusDeps): Promise<{ services: ServiceProbe[]; channels?: ChannelsStatusResponse }> {
  const opts = { timeoutMs: Math.min(PROBE_TIMEOUT_MS, deps.requestTimeoutMs) };
  const [runner, sessions, delivery] = await Promise.all([
    probe("agent-runner", () => callRpc(deps.bus, deps.subjects, RPC.agentsList, {}, opts)),
    probe("sessions", () => callRpc(deps.bus, deps.subjects, RPC.sessionsList, { limit: 1, offset: 0 }, opts)),
    probe("delivery", () => callRpc(deps.bus, deps.subjects, RPC.channelsStatus, { probe: false }, opts)),
  ]);
  return {
    services: [runner.probe, sessions.probe, delivery.probe],
    ...(delivery.answer === undefined ? {} : { channels: delivery.answer }),
  };
}

/** Counts for a status line: channels, accounts, and how many accounts are reachable. */
export function channelsSummary(res: ChannelsStatusResponse | undefined): ChannelsSummary | null {
  if (res === undefined) return null;
  const accounts = res.channels.flatMap((channel) => channel.accounts);
  return {
    channels: res.channels.length,
    accounts: accounts.length,
    reachable: accounts.filter((account) => account.reachable).length,
    withErrors: accounts.filter((account) => account.lastError !== "" || account.lastInboundError !== "").length,
    byChannel: res.channels.map((channel) => ({
      id: channel.id,
      kind: channel.kind,
      accounts: channel.accounts.length,
      reachable: channel.accounts.filter((account) => account.reachable).length,
    })),
  };
}
