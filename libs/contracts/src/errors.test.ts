import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CATALOGUE, ERROR_CODE_NAMES, errorCodeFromProto, errorCodeToProto } from "./errors.js";
import { ErrorCode } from "./gen/gateway/v1/common.pb.js";

describe("error catalogue", () => {
  it("has exactly the proto enum's codes, each round-tripping", () => {
    const protoNames = Object.keys(ErrorCode).filter((k) => Number.isNaN(Number(k)) && k !== "UNSPECIFIED");
    expect([...ERROR_CODE_NAMES].sort()).toEqual(protoNames.sort());
    for (const name of ERROR_CODE_NAMES) expect(errorCodeFromProto(errorCodeToProto(name))).toBe(name);
  });

  it("maps unknown proto codes to INTERNAL", () => {
    expect(errorCodeFromProto(ErrorCode.UNSPECIFIED)).toBe("INTERNAL");
    expect(errorCodeFromProto(999 as ErrorCode)).toBe("INTERNAL");
  });

  it("is documented code by code in docs/errors.md with its HTTP status", () => {
    const doc = readFileSync(new URL("../../../docs/errors.md", import.meta.url), "utf8");
    for (const [code, spec] of Object.entries(ERROR_CATALOGUE)) {
      expect(doc, `docs/errors.md lacks a row for ${code}`).toMatch(
        new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${spec.httpStatus}\\s*\\|\\s*\`${spec.httpType}\``),
      );
    }
  });
});
