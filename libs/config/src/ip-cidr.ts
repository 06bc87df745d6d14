import { isIP } from "node:net";

/** True for a bare IPv4/IPv6 address or a CIDR range such as `10.0.0.0/8` or `fd00::/8`. */
export function isIpOrCidr(value: string): boolean {
  const slash = value.indexOf("/");
  if (slash === -1) return isIP(value) !== 0;
  const family = isIP(value.slice(0, slash));
  const prefix = value.slice(slash + 1);
  // Digits only: Number() would accept "", " 8" or "0x8", which net.BlockList later rejects.
  if (family === 0 || !/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}
