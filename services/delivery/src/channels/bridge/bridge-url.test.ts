import { describe, expect, it } from "vitest";
import { bridgeEndpoint } from "./bridge-url.js";

describe("bridgeEndpoint", () => {
  it("leaves a URL without credentials as it is", () => {
    expect(bridgeEndpoint("http://127.0.0.1:8080")).toEqual({ baseUrl: "http://127.0.0.1:8080", headers: {}, secrets: [] });
  });

  it("moves user:password into a basic Authorization header and lists both as secrets", () => {
    const token = Buffer.from("gw@home:p@ss:word").toString("base64");
    expect(bridgeEndpoint("https://gw%40home:p%40ss%3Aword@signal.lan/api")).toEqual({
      baseUrl: "https://signal.lan/api",
      headers: { authorization: `Basic ${token}` },
      secrets: ["p@ss:word", token],
    });
  });

  it("treats a lone user name as the credential (token style)", () => {
    const endpoint = bridgeEndpoint("http://s3cr3t@10.0.0.5:1234");
    expect(endpoint.baseUrl).toBe("http://10.0.0.5:1234");
    expect(endpoint.secrets[0]).toBe("s3cr3t");
    expect(endpoint.headers.authorization).toBe(`Basic ${Buffer.from("s3cr3t:").toString("base64")}`);
  });
});
