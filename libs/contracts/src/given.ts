/**
 * A proto3 `optional string` field as the service reads it: undefined when absent. An edge from
 * before the field became optional sends "" for "not given", so "" counts as absent too (rolling
 * upgrades); no optional field of the contract gives "" a meaning of its own.
 */
export function given(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
