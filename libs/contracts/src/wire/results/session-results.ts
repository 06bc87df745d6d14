import { z } from "zod";
import { SessionChangesSchema, SessionPreviewViewSchema, SessionSummaryViewSchema } from "../session-views.js";

/** Answers of the `sessions.*` methods (SPEC §4.1); the views are session-views.ts's. */

export const SessionsListResultSchema = z.object({ sessions: z.array(SessionSummaryViewSchema), total: z.number().int() });

export const SessionsPreviewResultSchema = SessionPreviewViewSchema;

export const SessionsPatchResultSchema = z.object({ updated: z.boolean(), changes: SessionChangesSchema });
export const SessionsResetResultSchema = z.object({ reset: z.boolean() });
export const SessionsDeleteResultSchema = z.object({ deleted: z.boolean() });
export const SessionsCompactResultSchema = z.object({ compacted: z.boolean(), beforeSize: z.number(), afterSize: z.number() });
export const SessionsSubscribeResultSchema = z.object({ subscribed: z.literal(true), key: z.string() });
export const SessionsUnsubscribeResultSchema = z.object({ unsubscribed: z.literal(true), key: z.string() });
