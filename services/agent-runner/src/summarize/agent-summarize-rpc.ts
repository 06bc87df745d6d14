import { type Bus, type RequestContext, type Subjects, serveRpc, type Unsubscribe } from "@gw/bus";
import { BUILTIN_PROVIDER } from "@gw/config";
import { type AgentSummarizeRequest, type AgentSummarizeResponse, GatewayError, isGatewayError, RPC } from "@gw/contracts";
import type { Logger } from "@gw/runtime";
import type { AgentDirectory } from "../agent-directory.js";
import { ProviderError } from "../providers/model-provider.js";
import type { ProviderRegistry } from "../providers/provider-registry.js";
import { DEFAULT_SUMMARY_CHARS, summaryRequest, truncateAtWord } from "./summary-prompt.js";

/** Larger asks are capped: a summary replaces history, it should not rival it. */
const MAX_SUMMARY_CHARS = 20_000;

export interface SummarizeDeps {
  directory: AgentDirectory;
  providers: ProviderRegistry;
  logger: Logger;
}

function typed(err: unknown, signal: AbortSignal): GatewayError {
  if (isGatewayError(err)) return err;
  if (signal.aborted) return new GatewayError("TIMEOUT", "the model did not summarise before the caller's deadline", { cause: err });
  if (err instanceof ProviderError) return new GatewayError("MODEL_ERROR", err.message, { cause: err });
  return new GatewayError("INTERNAL", undefined, { cause: err });
}

/**
 * Summarises the entries compaction replaces with the agent's model (or the session's, when the
 * request names one), through the same retrying provider as runs, without tools. Builtin models
 * cannot summarise: they answer INVALID_REQUEST, and the sessions service, like on any error,
 * keeps its deterministic extractive summary (docs/decisions.md "Sessions").
 */
export async function summarize(deps: SummarizeDeps, req: AgentSummarizeRequest, ctx: RequestContext): Promise<AgentSummarizeResponse> {
  const agent = deps.directory.get(req.agentId);
  const ref = req.model || agent.model;
  if (ref.startsWith(`${BUILTIN_PROVIDER}/`))
    throw new GatewayError("INVALID_REQUEST", `${ref} cannot summarise; the sessions service summarises builtin models itself`);
  const { provider, model } = deps.providers.resolve(ref);
  const maxChars = Math.min(req.maxChars || DEFAULT_SUMMARY_CHARS, MAX_SUMMARY_CHARS);
  const signal = AbortSignal.timeout(Math.max(1, ctx.deadline - Date.now()));
  let text = "";
  try {
    for await (const chunk of provider.stream(summaryRequest(model, req.entries, maxChars), signal)) {
      if (chunk.type === "text") text += chunk.text;
    }
  } catch (err) {
    const failure = typed(err, signal);
    deps.logger.warn({ err, agentId: agent.id, model: ref, code: failure.code }, "summary failed");
    throw failure;
  }
  const summary = truncateAtWord(text, maxChars);
  if (summary === "") throw new GatewayError("MODEL_ERROR", `${ref} answered with an empty summary`);
  return { summary };
}

/** Serves RPC.agentSummarize (`<prefix>.rpc.runner.agent.summarize`) for the sessions service's compaction. */
export function serveAgentSummarize(deps: SummarizeDeps & { bus: Bus; subjects: Subjects }): Unsubscribe {
  return serveRpc(deps.bus, deps.subjects, RPC.agentSummarize, (req, ctx) => summarize(deps, req, ctx));
}
