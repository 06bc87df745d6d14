import { createHash } from "node:crypto";

/**
 * A firing's run id and nonce follow from the job's incarnation and the scheduled time alone, so
 * every replica that starts (or finishes starting) the same firing dispatches the same run, and
 * the run registry lets it register once. Letters, digits and '-' only: run ids go into subjects.
 */
export function firingRun(jobId: string, generation: string, scheduledAt: number): { runId: string; nonce: string } {
  const digest = createHash("sha256").update(`${jobId}\n${generation}\n${scheduledAt}`).digest("hex");
  return { runId: `cron-${jobId}-${scheduledAt}-${digest.slice(0, 8)}`, nonce: digest.slice(8, 40) };
}

/** The sender a firing's message shows in the session: the job and the time it was scheduled for. */
export const firingSender = (jobId: string, scheduledAt: number | "now") =>
  `cron:${jobId}@${scheduledAt === "now" ? "now" : new Date(scheduledAt).toISOString()}`;
