import { z } from "zod";

/**
 * Params of pairing and device methods (SPEC §4.1 `node.pair.request`, `node.pair.approve`,
 * `device.token.rotate`, and the ones the spec leaves to us: docs/decisions.md, Authentication);
 * their answers and events are results/device-results.ts's.
 */

/** A device names itself; the id is how control clients and tokens refer to it. */
export const DeviceIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:@-]*$/, "deviceId must be letters, digits, '.', '_', ':', '@' or '-'");

/** An Ed25519 public key: its 32 raw bytes, base64url (unpadded) or base64. */
const PublicKeySchema = z
  .string()
  .regex(/^[A-Za-z0-9+/_-]{43}={0,1}$/, "publicKey must be the 32-byte Ed25519 key in base64url")
  .describe("Ed25519 public key, 32 raw bytes in base64url");

/** An Ed25519 signature: 64 bytes, base64url or base64. */
const SignatureSchema = z
  .string()
  .regex(/^[A-Za-z0-9+/_-]{86}(==)?$/, "signature must be a 64-byte Ed25519 signature in base64url")
  .describe('Ed25519 signature of "agent-gateway pair v1\\n<connId>\\n<deviceId>" (connId from the connect answer), base64url');

export const NodePairRequestParamsSchema = z
  .object({
    deviceId: DeviceIdSchema,
    name: z.string().trim().min(1, "name must not be empty").max(128),
    publicKey: PublicKeySchema.optional(),
    signature: SignatureSchema.optional(),
  })
  .superRefine((params, ctx) => {
    if ((params.publicKey === undefined) !== (params.signature === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [params.publicKey === undefined ? "publicKey" : "signature"],
        message: "publicKey and signature come together: the signature proves the key is the device's",
      });
    }
  });
export type NodePairRequestParams = z.infer<typeof NodePairRequestParamsSchema>;

export const PairRequestIdParamsSchema = z.object({
  requestId: z.string().min(1).max(64),
});

export const DeviceIdParamsSchema = z.object({ deviceId: DeviceIdSchema });

export const EmptyParamsSchema = z.object({});
