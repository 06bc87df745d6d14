import { describe, expect, it } from "vitest";
import { lookup, parseLookupPath } from "./lookup-path.js";
import { compileTemplate } from "./template.js";

const issue = {
  action: "opened",
  issue: { number: 42, title: "Login fails", labels: [{ name: "bug" }, { name: "p1" }], locked: false, closed_at: null },
  repository: { full_name: "acme/widgets" },
  "hook-id": 7,
};
const ctx = {
  payload: issue,
  headers: { "x-github-event": "issues", "x-github-delivery": "d-1" },
  query: { ref: "main" },
};

describe("mapping templates", () => {
  it("fill nested fields, array items, headers (any case) and query parameters", () => {
    const template = compileTemplate(
      "[{{ headers.X-GitHub-Event }}] #{{payload.issue.number}} {{ payload.issue.title }} was {{ payload.action }} " +
        "({{ payload.issue.labels[1].name }}, {{ payload.hook-id }}, ref {{ query.ref }})",
    );
    expect(template.render(ctx)).toBe("[issues] #42 Login fails was opened (p1, 7, ref main)");
  });

  it("render missing fields, nulls and out-of-range items as empty, and values of other types as text", () => {
    const template = compileTemplate(
      "a={{ payload.nope.deeper }} b={{ payload.issue.labels[9].name }} c={{ payload.issue.closed_at }} " +
        "d={{ payload.issue.locked }} e={{ payload.issue.labels[0] }} f={{ headers.missing }} g={{ payload.action[0] }}",
    );
    expect(template.render(ctx)).toBe('a= b= c= d=false e={"name":"bug"} f= g=');
    expect(compileTemplate("{{ payload.x }}").render({ payload: "a string body", headers: {}, query: {} })).toBe("");
    expect(compileTemplate("{{ payload }}").render({ payload: [1, 2], headers: {}, query: {} })).toBe("[1,2]");
  });

  it("read own data only: prototype and constructor names are missing fields, nothing is called", () => {
    const template = compileTemplate("{{ payload.__proto__ }}|{{ payload.constructor.name }}|{{ payload.issue.toString }}|{{ payload.action.length }}");
    expect(template.render(ctx)).toBe("|||");
    const poisoned = JSON.parse('{"__proto__": {"admin": true}}') as unknown;
    expect(compileTemplate("{{ payload.__proto__.admin }}").render({ payload: poisoned, headers: {}, query: {} })).toBe("true");
  });

  it("keep text without holes as it is, stray braces included", () => {
    expect(compileTemplate("plain } text }} {").render(ctx)).toBe("plain } text }} {");
  });

  it("refuse broken templates at compile time, saying where", () => {
    expect(() => compileTemplate("Issue {{ payload.issue.title")).toThrow('"{{" at character 7 is never closed with "}}"');
    expect(() => compileTemplate("a {{ }} b")).toThrow('empty "{{ }}" at character 3');
    expect(() => compileTemplate("{{ body.title }}")).toThrow("must start with payload, headers, query");
    expect(() => compileTemplate("{{ payload.a b }}")).toThrow('unexpected " b"');
    expect(() => compileTemplate("{{ payload.a[x] }}")).toThrow('unexpected "[x]"');
    expect(() => compileTemplate("{{ payload.a {{ payload.b }}")).toThrow("never closed");
  });
});

describe("lookup paths", () => {
  it("parse keys and indexes and look them up", () => {
    const path = parseLookupPath(" payload.issue.labels[0].name ");
    expect(path.steps).toEqual([{ key: "issue" }, { key: "labels" }, { index: 0 }, { key: "name" }]);
    expect(lookup(path, ctx)).toBe("bug");
    expect(lookup(parseLookupPath("headers.x-github-delivery"), ctx)).toBe("d-1");
    expect(lookup(parseLookupPath("payload.issue"), { payload: null, headers: {}, query: {} })).toBeUndefined();
  });
});
