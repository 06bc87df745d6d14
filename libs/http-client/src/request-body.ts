/** What a request may carry; at most one of these per request. */
export interface BodyOptions {
  /** Serialised with JSON.stringify, sent as application/json. */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string> | URLSearchParams;
  /** Sent as multipart/form-data with a generated boundary (files as Blob entries); Node's global FormData. */
  multipart?: FormData;
  /** Sent as is; name its type in the request's headers. */
  body?: string | Uint8Array;
}

export interface EncodedBody {
  body: string | Uint8Array | undefined;
  contentType: string | undefined;
}

/**
 * Multipart is encoded by Node's own fetch Response, which knows the global FormData; undici 7
 * only recognises its own FormData class, and the parts are in memory already anyway.
 */
async function encodeMultipart(form: FormData): Promise<EncodedBody> {
  const encoded = new Response(form);
  return { body: new Uint8Array(await encoded.arrayBuffer()), contentType: encoded.headers.get("content-type") ?? undefined };
}

/** Synchronous except for multipart, so ordinary requests take no extra turn. */
export function encodeBody(opts: BodyOptions): EncodedBody | Promise<EncodedBody> {
  const given = (["json", "form", "multipart", "body"] as const).filter((key) => opts[key] !== undefined);
  if (given.length > 1) throw new TypeError(`a request takes one body, got ${given.join(" and ")}`);
  if (opts.json !== undefined) return { body: JSON.stringify(opts.json), contentType: "application/json" };
  if (opts.form !== undefined)
    return { body: new URLSearchParams(opts.form).toString(), contentType: "application/x-www-form-urlencoded" };
  if (opts.multipart !== undefined) return encodeMultipart(opts.multipart);
  return { body: opts.body, contentType: undefined };
}
