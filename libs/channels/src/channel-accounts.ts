/**
 * A channel's accounts (DESIGN §7): without `accounts` the channel is one account named
 * "default"; with it, every key set on the channel applies to each account unless the account
 * sets its own (a shallow merge: an account's `groups` replaces the channel's whole), and the
 * first account in the file is the default.
 */
import { ConfigError, type ConfigIssue } from "@gw/config";
import type { z } from "zod";

export const DEFAULT_ACCOUNT_ID = "default";

export interface ChannelAccount<Settings = Record<string, unknown>> {
  accountId: string;
  settings: Settings;
}

const ACCOUNT_ID = /^[a-z0-9][a-z0-9_-]*$/;
// JavaScript objects list integer-like keys first, whatever the file's order, so such an
// account id would silently become the default.
const ARRAY_INDEX = /^(0|[1-9]\d*)$/;
/** Keys that describe the channel, not an account. */
const CHANNEL_ONLY = new Set(["kind", "accounts"]);

type Origin = Map<string, "channel" | "account">;

/**
 * The ordered accounts of one channel config (`channels.<id>`), settings merged but not yet
 * validated. `where` names the channel in errors, e.g. "channels.ops". Throws ConfigError.
 */
export function resolveAccounts(channel: Record<string, unknown>, where = "channel"): ChannelAccount[] {
  return resolveWithOrigins(channel, where).map(({ accountId, settings }) => ({ accountId, settings }));
}

/**
 * Resolves the accounts of `channels.<channelId>` and validates each one's merged settings
 * with the kind's schema. Every problem of every account is reported at once, at the key
 * path where it can be fixed (the account's key when the account set it, else the channel's).
 */
export function parseChannelAccounts<S extends z.ZodType>(
  channelId: string,
  channel: Record<string, unknown>,
  schema: S,
): Array<ChannelAccount<z.output<S>>> {
  const where = `channels.${channelId}`;
  const accounts = resolveWithOrigins(channel, where);
  const multi = Object.hasOwn(channel, "accounts");
  const issues: ConfigIssue[] = [];
  const parsed: Array<ChannelAccount<z.output<S>>> = [];
  for (const account of accounts) {
    const result = schema.safeParse(account.settings);
    if (result.success) {
      parsed.push({ accountId: account.accountId, settings: result.data });
      continue;
    }
    for (const issue of result.error.issues) {
      issues.push(...describeIssue(issue, { where, multi, account }));
    }
  }
  if (issues.length > 0) throw new ConfigError(where, unique(issues));
  return parsed;
}

interface AccountWithOrigins extends ChannelAccount {
  origins: Origin;
}

function resolveWithOrigins(channel: Record<string, unknown>, where: string): AccountWithOrigins[] {
  const shared: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(channel)) if (!CHANNEL_ONLY.has(key)) shared[key] = value;
  if (!Object.hasOwn(channel, "accounts")) {
    const origins: Origin = new Map(Object.keys(shared).map((key) => [key, "channel"]));
    return [{ accountId: DEFAULT_ACCOUNT_ID, settings: shared, origins }];
  }
  const accounts = channel.accounts;
  if (!isPlainObject(accounts) || Object.keys(accounts).length === 0) {
    throw new ConfigError(where, [
      { path: `${where}.accounts`, message: "expected an object with at least one account, e.g. { main: { ... } }" },
    ]);
  }
  const issues: ConfigIssue[] = [];
  const out: AccountWithOrigins[] = [];
  for (const [accountId, own] of Object.entries(accounts)) {
    const path = `${where}.accounts.${accountId}`;
    if (!ACCOUNT_ID.test(accountId)) {
      issues.push({ path, message: "account ids use lowercase letters, digits, '_' and '-', starting with a letter or digit" });
    } else if (ARRAY_INDEX.test(accountId)) {
      issues.push({ path, message: "an account id must not be a bare number: the first account is the default, and a bare number would not keep its place" });
    }
    if (!isPlainObject(own)) {
      issues.push({ path, message: "expected an object of this account's settings" });
      continue;
    }
    for (const key of Object.keys(own)) {
      if (CHANNEL_ONLY.has(key)) issues.push({ path: `${path}.${key}`, message: `"${key}" belongs to the channel, not to one account` });
    }
    const origins: Origin = new Map(Object.keys(shared).map((key) => [key, "channel"]));
    for (const key of Object.keys(own)) origins.set(key, "account");
    out.push({ accountId, settings: { ...shared, ...own }, origins });
  }
  if (issues.length > 0) throw new ConfigError(where, issues);
  return out;
}

function describeIssue(
  issue: z.core.$ZodIssue,
  ctx: { where: string; multi: boolean; account: AccountWithOrigins },
): ConfigIssue[] {
  const accountPath = `${ctx.where}.accounts.${ctx.account.accountId}`;
  const base = (key: string | undefined): string => {
    if (!ctx.multi) return ctx.where;
    // A key nobody set is reported on the account: that is where each account's secret goes.
    return key !== undefined && ctx.account.origins.get(key) === "channel" ? ctx.where : accountPath;
  };
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({ path: joinPath(base(key), [...issue.path, key]), message: "unknown key" }));
  }
  const top = typeof issue.path[0] === "string" ? issue.path[0] : undefined;
  const missing = issue.code === "invalid_type" && issue.input === undefined;
  const message = missing
    ? ctx.multi
      ? `is required (expected ${issue.expected}; set it on the channel or on the account)`
      : `is required (expected ${issue.expected})`
    : issue.message;
  return [{ path: joinPath(base(top), issue.path), message }];
}

/** A bad key on the channel fails every account the same way; say it once. */
function unique(issues: ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.path}\n${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function joinPath(base: string, path: readonly PropertyKey[]): string {
  let out = base;
  for (const segment of path) out += typeof segment === "number" ? `[${segment}]` : `.${String(segment)}`;
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
