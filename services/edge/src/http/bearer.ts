/** The secret of an `Authorization: Bearer <secret>` header, or undefined. */
export function bearerCredential(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match?.[1]?.trim() || undefined;
}
