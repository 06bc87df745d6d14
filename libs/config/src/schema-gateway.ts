import { ROLES } from "@gw/contracts";
import { z } from "zod";
import { isIpOrCidr } from "./ip-cidr.js";

const port = z.int().min(0).max(65535);
const positiveInt = z.int().positive();
// RFC 7230 token characters; header names compare case-insensitively, so keep them lowercase.
const headerName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "expected an HTTP header name")
  .transform((name) => name.toLowerCase());

/**
 * What a user vouched for by an identity method (overlay, trusted proxy) may do: the roles it
 * may take in `connect`, and who of them may take control anyway. The HTTP operator routes
 * (/v1, /api/send, /api/tools/invoke) need control (docs/decisions.md, Authentication). The
 * default keeps every role open, as before these keys existed.
 */
const identityRoles = {
  roles: z.array(z.enum(ROLES, { error: "expected control, node or webchat" })).default(() => [...ROLES]),
  // Compared exactly with the user the header names (after trimming, as the header is).
  controlUsers: z.array(z.string().trim().min(1, "expected a user name")).default([]),
};

const trustedProxyAuthSchema = () => z
  .strictObject({
    enabled: z.boolean().default(false),
    header: headerName.default("x-forwarded-user"),
    ...identityRoles,
  })
  .prefault({});

const authSchema = () => z
  .strictObject({
    token: z.string().min(1).optional(),
    password: z.string().min(1).optional(),
    allowLoopback: z.boolean().default(true),
    trustedProxy: trustedProxyAuthSchema(),
  })
  .prefault({});

const overlaySchema = () => z
  .strictObject({
    mode: z.enum(["enabled", "require", "disabled"]).default("disabled"),
    ...identityRoles,
  })
  .prefault({});

const limitsSchema = () => z
  .strictObject({
    maxFrameBytes: positiveInt.default(1_048_576),
    maxBodyBytes: positiveInt.default(1_048_576),
    failedAuthMax: positiveInt.default(20),
    failedAuthWindowSeconds: positiveInt.default(60),
    requestTimeoutMs: positiveInt.default(15_000),
    preConnectTimeoutMs: positiveInt.default(10_000),
    // Abuse limits (docs/decisions.md "Abuse limits"): every one bounds memory or CPU a single
    // client can take from an edge.
    maxConnectionsPerIp: positiveInt.default(256),
    maxInFlightPerConnection: positiveInt.default(64),
    maxSubscriptionsPerConnection: positiveInt.default(256),
    maxSendBufferBytes: positiveInt.default(4_194_304),
    httpRequestTimeoutMs: positiveInt.default(30_000),
  })
  .prefault({});

/** Device pairing (docs/decisions.md, Authentication): pending requests live in the FastStore. */
const pairingSchema = () => z
  .strictObject({
    // Lets a device open a pairing connection (`connect` with `pairing: true`) without a credential.
    enabled: z.boolean().default(true),
    // A pending request lapses after this long unless approved or rejected.
    pendingTtlSeconds: positiveInt.max(86_400).default(300),
    // Pending requests one client IP may have at once.
    maxPendingPerIp: positiveInt.default(3),
    // Pending requests in all (a spray from many addresses cannot bury the approver's list).
    maxPending: positiveInt.default(100),
  })
  .prefault({});

/**
 * A browser origin (`https://app.example.org`, `http://localhost:5173`): scheme, host and
 * port only, normalised the way browsers send it, so comparison is a string match.
 */
const browserOrigin = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "http:" || url.protocol === "https:") && url.origin === value.replace(/\/$/, "").toLowerCase();
    } catch {
      return false;
    }
  }, "expected a browser origin such as https://app.example.org (scheme, host and optional port; no path)")
  .transform((value) => new URL(value).origin);

export const gatewaySectionSchema = () => z
  .strictObject({
    bind: z.string().regex(/^\S+$/, "expected a host name or IP address").default("127.0.0.1"),
    port: port.default(18789),
    dataDir: z.string().min(1).default("./data"),
    auth: authSchema(),
    overlay: overlaySchema(),
    trustedProxies: z
      .array(z.string().refine(isIpOrCidr, "expected an IP address or CIDR range (e.g. 10.0.0.0/8)"))
      .default([]),
    // Browser pages (by Origin) allowed to call the gateway; the edge's own pages always are.
    allowedOrigins: z.array(browserOrigin).default([]),
    pairing: pairingSchema(),
    limits: limitsSchema(),
  })
  .prefault({})
  .superRefine((gateway, ctx) => {
    // Without a proxy allow-list any client could claim an identity by sending the header itself.
    if (gateway.auth.trustedProxy.enabled && gateway.trustedProxies.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["trustedProxies"],
        message: "must list at least one proxy address when gateway.auth.trustedProxy.enabled is true",
      });
    }
  });
