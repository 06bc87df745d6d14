import { z } from "zod";

/** Pieces several answers share. */

export const timestamp = z.number().int().describe("milliseconds since the Unix epoch");

/** Epoch ms, or null for "never". */
export const nullableMs = z.number().int().nullable();
