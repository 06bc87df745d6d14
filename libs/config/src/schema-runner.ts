import { z } from "zod";

const positiveInt = z.int().positive();

const httpFetchToolSchema = () => z
  .strictObject({
    // Private, loopback and link-local addresses are refused unless listed here (SSRF).
    allowHosts: z.array(z.string().min(1)).default([]),
    allowPrivateNetworks: z.boolean().default(false),
    // Bytes downloaded at most; the result the model reads is then cut to maxToolResultBytes.
    maxBytes: positiveInt.default(262_144),
    timeoutMs: positiveInt.default(10_000),
  })
  .prefault({});

/** Sources of the built-in tools: an MCP server may not take one of their names. */
const BUILTIN_TOOL_SOURCES = ["time", "http", "message", "sessions"];

/**
 * One MCP server (docs/decisions.md, "MCP servers as agent tools"): a child process speaking
 * stdio (`command`) or a Streamable HTTP endpoint (`url`). Its tools are `<id>.<tool>`.
 */
const mcpServerSchema = () => z
  .strictObject({
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    // The child's whole environment besides PATH, HOME, USER, LOGNAME, SHELL and TERM: the
    // runner's own environment (its secrets) is not passed on.
    env: z
      .record(z.string(), z.string())
      .superRefine((env, ctx) => {
        for (const name of Object.keys(env))
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) ctx.addIssue({ code: "custom", path: [name], message: "expected an environment variable name" });
      })
      .default({}),
    url: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }).optional(),
    headers: z.record(z.string().min(1), z.string()).default({}),
    // The URL's host may resolve to a private, loopback or link-local address only if listed (SSRF).
    allowHosts: z.array(z.string().min(1)).default([]),
    // One tool call's deadline, and the connect-and-list deadline.
    timeoutMs: positiveInt.max(3_600_000).default(30_000),
    // Globs over the server's tool names (`*` any run of characters): only these are offered.
    allowTools: z.array(z.string().min(1)).default(["*"]),
    denyTools: z.array(z.string().min(1)).default([]),
    // Most JSON one result may take; runner.maxToolResultBytes when left out.
    maxResultBytes: positiveInt.max(786_432).optional(),
  })
  .superRefine((server, ctx) => {
    if ((server.command === undefined) === (server.url === undefined))
      ctx.addIssue({ code: "custom", path: [], message: "set either command (stdio) or url (Streamable HTTP)" });
    const misplaced =
      server.command !== undefined
        ? (["headers", "allowHosts"] as const).filter((k) => Object.keys(server[k]).length > 0)
        : (["args", "env"] as const).filter((k) => Object.keys(server[k]).length > 0);
    for (const key of misplaced)
      ctx.addIssue({ code: "custom", path: [key], message: `${key} applies only to ${server.command !== undefined ? "url" : "command"} servers` });
  });

const mcpSchema = () => z
  .strictObject({
    servers: z
      .record(z.string(), mcpServerSchema())
      .superRefine((servers, ctx) => {
        // Checked here rather than by the key schema, whose message zod replaces with its own.
        for (const id of Object.keys(servers)) {
          if (!/^[a-z0-9][a-z0-9_-]{0,31}$/.test(id))
            ctx.addIssue({ code: "custom", path: [id], message: "expected 1-32 lowercase letters, digits, '_' or '-', starting with a letter or digit" });
          else if (BUILTIN_TOOL_SOURCES.includes(id)) ctx.addIssue({ code: "custom", path: [id], message: `"${id}" is the name of built-in tools` });
        }
      })
      .default({}),
  })
  .prefault({});

/** The agent runner: capacity, run limits, retention, and built-in tool settings. */
export const runnerSectionSchema = () => z
  .strictObject({
    // Runs one runner process executes at once; it pulls no more work than this. A run mostly
    // waits on its model, so one process holds many: 100 runners x 256 = 25,600 runs in flight.
    maxConcurrentRuns: positiveInt.default(256),
    // Below that ceiling, a runner takes no new run while its event loop's delay p99 (over a
    // 250 ms window) is over this, and raises its limit again as the loop keeps up, so a burst
    // waits in the queue instead of starving the runs in hand (their heartbeats with them).
    // 0 turns it off.
    admissionLagMs: z.number().int().min(0).default(100),
    // Most JSON a tool's result may take; a longer `content` is cut (and marked truncated) so the
    // result fits in one NATS message (max_payload, 1 MiB by default) with its envelope.
    maxToolResultBytes: positiveInt.max(786_432).default(262_144),
    defaultTimeoutSeconds: positiveInt.default(600),
    maxTimeoutSeconds: positiveInt.default(3600),
    // How long a finished run's result stays readable by agent.wait.
    resultRetentionSeconds: positiveInt.default(600),
    // How long, and up to how many bytes in all, runs' agent events are kept so a client that
    // reconnects (to any edge) gets what it missed (agent.subscribe with afterSeq); the oldest go first.
    eventRetentionSeconds: positiveInt.default(600),
    eventRetentionMaxBytes: positiveInt.default(268_435_456),
    // Model calls per run (each tool round trip is one more).
    maxToolRounds: positiveInt.default(8),
    // Session entries replayed into a model call (the newest ones; compaction keeps older
    // context as a summary), so a run's cost does not grow with the session's length.
    historyLimit: positiveInt.max(10_000).default(400),
    tools: z.strictObject({ httpFetch: httpFetchToolSchema(), mcp: mcpSchema() }).prefault({}),
  })
  .prefault({});
