import { describe, expect, it } from "vitest";
import { pathWithQuery, safeReturnPath } from "@/lib/dashboard/auth";

/** The post-login redirect only goes to paths on this site (CWE-601). */
describe("safeReturnPath", () => {
  const cases: [string | null | undefined, string][] = [
    ["/approvals?call=call_1", "/approvals?call=call_1"],
    ["/", "/"],
    [null, "/"],
    [undefined, "/"],
    ["", "/"],
    ["https://evil.example/", "/"],
    ["//evil.example/", "/"],
    ["/\\evil.example", "/"],
    ["javascript:alert(1)", "/"],
    ["/a\nb", "/"],
    ["approvals", "/"],
  ];
  it.each(cases)("%j → %s", (input, expected) => {
    expect(safeReturnPath(input)).toBe(expected);
  });
});

describe("pathWithQuery", () => {
  it("keeps every value, drops undefined, encodes", () => {
    expect(pathWithQuery("/sessions/s1", { tool: "read_file", q: "a b&c", x: undefined, multi: ["1", "2"] })).toBe("/sessions/s1?tool=read_file&q=a+b%26c&multi=1&multi=2");
    expect(pathWithQuery("/audit", {})).toBe("/audit");
  });
});
