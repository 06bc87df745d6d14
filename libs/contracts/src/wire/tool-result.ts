import { z } from "zod";

/**
 * A tool's result (SPEC §6: an object carrying at least `content`, the text the model reads),
 * as `POST /api/tools/invoke` answers it and `ToolsInvokeResponse.result_json` carries it.
 */
export const ToolResultSchema = z.looseObject({ content: z.string() });
export type ToolResult = z.infer<typeof ToolResultSchema>;
