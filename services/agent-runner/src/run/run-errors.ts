import { type ErrorCodeName, isGatewayError } from "@gw/contracts";
import { ProviderError } from "../providers/model-provider.js";

/** Why a run's AbortController fired. */
export class RunAborted extends Error {
  constructor() {
    super("the run was aborted");
  }
}

/** The run's claim found it no longer queued (finished, aborted or expired): not ours to run. */
export class RunNotOurs extends Error {
  constructor() {
    super("the run is not ours to run");
  }
}

export class RunTimedOut extends Error {
  constructor(readonly seconds: number) {
    super(`the run did not finish within ${seconds} s`);
  }
}

/** The typed outcome a failed run records and the client sees. */
export function runFailure(err: unknown, signal: AbortSignal): { code: ErrorCodeName; message: string } {
  const reason: unknown = signal.aborted ? signal.reason : undefined;
  if (reason instanceof RunAborted) return { code: "ABORTED", message: reason.message };
  if (reason instanceof RunTimedOut) return { code: "TIMEOUT", message: reason.message };
  if (isGatewayError(err)) return { code: err.code, message: err.message };
  if (err instanceof ProviderError) return { code: "MODEL_ERROR", message: err.message };
  return { code: "INTERNAL", message: "the run failed unexpectedly" };
}
