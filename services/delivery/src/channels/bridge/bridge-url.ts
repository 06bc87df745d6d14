/**
 * Where a bridge on the user's own machine (signal-cli-rest-api, BlueBubbles) is reached. Such
 * bridges have no login of their own worth the name, so people put a reverse proxy with basic
 * auth in front when the bridge is not on loopback: `https://user:password@signal.lan`. The
 * credentials then travel as an Authorization header, never in a request URL, and count as
 * secrets to scrub.
 */
export interface BridgeEndpoint {
  /** The bridge URL without credentials. */
  baseUrl: string;
  /** `authorization: Basic ...` when the URL carried credentials. */
  headers: Record<string, string>;
  /** The password (or a lone user name, token style) and the header value. */
  secrets: string[];
}

export function bridgeEndpoint(bridgeUrl: string): BridgeEndpoint {
  const url = new URL(bridgeUrl);
  if (url.username === "" && url.password === "") return { baseUrl: bridgeUrl, headers: {}, secrets: [] };
  const user = safeDecode(url.username);
  const password = safeDecode(url.password);
  url.username = "";
  url.password = "";
  const token = Buffer.from(`${user}:${password}`, "utf8").toString("base64");
  const credential = password !== "" ? password : user;
  return {
    baseUrl: url.href.replace(/\/+$/, ""),
    headers: { authorization: `Basic ${token}` },
    secrets: [credential, token],
  };
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
