import { z } from "zod";

/** The SPEC §1 WebSocket envelope. Params are validated per method by the edge's registry. */
export const RequestFrameSchema = z.object({
  jsonrpc: z.literal("2.0", { error: 'jsonrpc must be "2.0"' }),
  id: z.number({ error: "id must be a number" }).finite(),
  method: z.string({ error: "method must be a string" }).min(1, "method must not be empty").max(128),
  params: z.record(z.string(), z.unknown(), { error: "params must be an object" }).optional(),
});
export type RequestFrame = z.infer<typeof RequestFrameSchema>;

export type FrameId = number | string | null;

export interface SuccessFrame {
  id: FrameId;
  ok: true;
  payload: Record<string, unknown>;
  meta?: Record<string, unknown>;
}

export interface ErrorFrame {
  id: FrameId;
  ok: false;
  error: { code: string; message: string; details?: Record<string, unknown> };
}

export interface EventFrame {
  event: string;
  payload: Record<string, unknown>;
}

/** SPEC §7 HTTP error body; `param` names the request parameter at fault, as OpenAI's does. */
export interface HttpErrorBody {
  error: { message: string; type: string; param?: string };
}
