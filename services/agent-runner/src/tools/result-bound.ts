import { GatewayError } from "@gw/contracts";
import type { ToolResult } from "./tool-registry.js";

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

/** The longest prefix of `text` whose JSON string encoding fits in `budget` bytes. */
function fittingPrefix(text: string, budget: number): string {
  let [lo, hi] = [0, text.length];
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (bytes(text.slice(0, mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  // Never split a surrogate pair.
  const last = text.charCodeAt(lo - 1);
  if (lo > 0 && last >= 0xd800 && last <= 0xdbff) lo--;
  return text.slice(0, lo);
}

/**
 * Keeps a tool's result within `maxBytes` of JSON (runner.maxToolResultBytes), so it fits in one
 * NATS message (max_payload, 1 MiB by default) with the envelope of the event, reply or session
 * entry that carries it. Only `content` can be cut: it is shortened, ends with a note the model
 * reads, and `truncated` is set. A result whose other fields alone are too big is refused.
 */
export function boundToolResult(tool: string, result: ToolResult, maxBytes: number): ToolResult {
  const size = bytes(result);
  if (size <= maxBytes) return result;
  const note = `\n[truncated by the gateway: the result was ${size} bytes, the limit is ${maxBytes}]`;
  const shell = { ...result, content: note, truncated: true };
  const budget = maxBytes - bytes(shell) + bytes(note);
  if (budget <= bytes(note)) {
    throw new GatewayError(
      "PAYLOAD_TOO_LARGE",
      `tool ${tool} returned ${size} bytes, above runner.maxToolResultBytes (${maxBytes}), outside its content`,
    );
  }
  // `budget` holds the JSON string of content + note; cut content so both fit.
  const content = fittingPrefix(result.content, budget - bytes(note) + 2);
  return { ...shell, content: `${content}${note}` };
}
