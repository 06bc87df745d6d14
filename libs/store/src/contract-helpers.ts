import { type ErrorCodeName, isGatewayError } from "@gw/contracts";
import { expect } from "vitest";

/** Asserts that `work` rejects with a GatewayError carrying `code`. */
export async function expectGatewayError(work: Promise<unknown>, code: ErrorCodeName): Promise<void> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected a ${code} error, but the call succeeded`).toBeDefined();
  expect(isGatewayError(err) ? err.code : err).toBe(code);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let counter = 0;
/** Unique per call, so tests sharing one server never see each other's data. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}${counter}_${Math.random().toString(36).slice(2, 8)}`;
}
