import type { RunRecord } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { RunRegistry } from "@gw/runs";
import type { RouteReport } from "../providers/model-router.js";
import type { LoopResult } from "./agent-loop.js";
import type { RunEventPublisher } from "./run-event-publisher.js";

/** What `execute` learned on the way, for the run's summary even when it fails. */
export interface RunFacts {
  agentId: string;
  model: string;
  /** Which model answered and the fallbacks taken, once the run has a model. */
  route?: RouteReport;
  /** The lifecycle `start` was sent. */
  started?: boolean;
}

/** A run that ended well: the loop's result, and the inbox messages it read (inbox-reader.ts). */
export interface ExecutedRun extends LoopResult {
  steered: readonly string[];
}

/** The lifecycle end/error data and the run's record: the model that answered and the fallbacks taken. */
export function routeData(facts: RunFacts): Pick<RunRecord, "model" | "fallbacks"> {
  if (facts.route === undefined) return {};
  return {
    ...(facts.route.answered ? { model: facts.route.answered } : {}),
    ...(facts.route.fallbacks.length ? { fallbacks: [...facts.route.fallbacks] } : {}),
  };
}

type Outcome = Pick<RunRecord, "payloads" | "error" | "finishReason" | "toolCalls" | "usage" | "model" | "fallbacks" | "steered">;

/**
 * Records the outcome and sends the terminal event carrying it, at once: the edges answer from
 * the event, so the client does not wait for the registry write. A waiter that reads the
 * registry in that gap sees the run still running and finds it final on its next look.
 */
export async function announce(
  deps: { registry: RunRegistry },
  events: RunEventPublisher,
  record: RunRecord,
  outcome: Outcome,
  data: Record<string, unknown>,
  log: Logger,
): Promise<void> {
  const { final, written } = deps.registry.beginFinish(record, outcome);
  events.emit("lifecycle", data, final);
  await written.catch((err: unknown) => log.error({ err }, "cannot record the run's outcome"));
}

/** What a run that ended well records: its answer, for OpenAI clients why it stopped, and what it read of its inbox. */
export function finalOutcome(result: ExecutedRun): Pick<RunRecord, "payloads" | "finishReason" | "toolCalls" | "usage" | "steered"> {
  return {
    payloads: [{ type: "text", text: result.text }],
    finishReason: result.finishReason,
    usage: result.usage,
    ...(result.clientCalls.length
      ? { toolCalls: result.clientCalls.map((c) => ({ id: c.id, name: c.name, arguments: JSON.stringify(c.input) })) }
      : {}),
    ...(result.steered.length ? { steered: [...result.steered] } : {}),
  };
}
