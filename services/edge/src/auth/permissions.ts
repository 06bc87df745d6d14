import { ROLES, type Role } from "@gw/contracts";

/**
 * What each kind of connection may do: the one permission table of the edge (docs/protocol.md,
 * Roles). A connection's access is its role, except a device that connected to be paired and
 * has no credential yet: `pairing`, which may only ask to be paired.
 */
export type Access = Role | "pairing";

/** Events by family: what a connection may receive is decided per family, like methods per name. */
export const EVENT_FAMILIES = ["agent", "session", "pairing", "device", "pairing.result", "connection"] as const;
export type EventFamily = (typeof EVENT_FAMILIES)[number];

interface Grant {
  methods: "all" | ReadonlySet<string>;
  events: "all" | ReadonlySet<EventFamily>;
}

/** Chatting with agents: what every role that talks to agents needs. */
const CHAT_METHODS = [
  "agents.list",
  "agent.identity.get",
  "agent",
  "agent.wait",
  "agent.subscribe",
  "agent.unsubscribe",
  "chat.abort",
  "agent.abort",
  "sessions.preview",
  "sessions.subscribe",
  "sessions.unsubscribe",
];

/**
 * control: everything, and every run's lifecycle, session's, pairing's and device's events (a
 *   run's whole stream when it follows or subscribes to it: agent.subscribe, `all` for every run).
 * node (a device): chat with agents on the sessions it names, ask to be paired, rotate its own
 *   token; events of its runs and watched sessions, and its own pairing result.
 * webchat: chat with agents on its own sessions only (`webchat:<owner>`, session-scope.ts);
 *   events of its runs and watched sessions.
 * pairing: `node.pair.request`, and then its result.
 * Every connection gets the events about itself (`connection`: `shutdown` when its edge drains).
 */
export const PERMISSIONS: Readonly<Record<Access, Grant>> = Object.freeze({
  control: { methods: "all", events: "all" },
  node: {
    methods: new Set([...CHAT_METHODS, "node.pair.request", "device.token.rotate"]),
    events: new Set<EventFamily>(["agent", "session", "pairing.result", "connection"]),
  },
  webchat: {
    methods: new Set(CHAT_METHODS),
    events: new Set<EventFamily>(["agent", "session", "connection"]),
  },
  pairing: {
    methods: new Set(["node.pair.request"]),
    events: new Set<EventFamily>(["pairing.result", "connection"]),
  },
});

export function mayCall(access: Access, method: string): boolean {
  const { methods } = PERMISSIONS[access];
  return methods === "all" || methods.has(method);
}

export function mayReceive(access: Access, family: EventFamily): boolean {
  const { events } = PERMISSIONS[access];
  return events === "all" || events.has(family);
}

/**
 * Whether a server-side failure reaches this connection in its own words (an upstream's URL and
 * host...): control's, an operator's tool; webchat faces browsers and node is a device, so they
 * get the catalogue's message and a request id (error-detail.ts, DESIGN §10).
 */
export function seesErrorDetail(access: Access): boolean {
  return access === "control";
}

/** The roles that may call `method` (the API documents list them per method). */
export function rolesFor(method: string): Role[] {
  return ROLES.filter((role) => mayCall(role, method));
}

/** Of `methods`, the ones `access` may call, in their order. */
export function methodsFor(access: Access, methods: readonly string[]): string[] {
  return methods.filter((method) => mayCall(access, method));
}

/** The family of an event kind: `session.created` -> `session`, `node.pair.result` -> `pairing.result`. */
export function eventFamily(event: string): EventFamily {
  if (event === "agent") return "agent";
  if (event === "shutdown") return "connection";
  if (event === "node.pair.result") return "pairing.result";
  if (event.startsWith("node.pair.")) return "pairing";
  if (event.startsWith("device.")) return "device";
  if (event.startsWith("session.")) return "session";
  throw new Error(`event ${event} belongs to no family in the permission table`);
}

/** The error message when `access` may not call `method`: says what it may do instead. */
export function forbiddenMethodMessage(access: Access, method: string): string {
  if (access === "pairing") {
    return `method ${method} is not allowed on a pairing connection: it may only call node.pair.request, then connect again with the device token`;
  }
  const { methods } = PERMISSIONS[access];
  const allowed = methods === "all" ? "every method" : [...methods].join(", ");
  return `method ${method} is not allowed for role ${access} (it may call ${allowed})`;
}
