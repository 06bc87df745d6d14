import { ConfigError } from "@gw/config";
import { expect } from "vitest";

/** The issues of the ConfigError `fn` throws (a test fails if it throws anything else, or nothing). */
export function configIssuesOf(fn: () => unknown): Array<{ path: string; message: string }> {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error("expected a ConfigError");
}
