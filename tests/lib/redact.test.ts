import { describe, expect, it } from "vitest";
import { redactText, redactValue, registerSecret } from "@/lib/redact";

describe("redaction", () => {
  it.each([
    ["aws_access_key", "key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"],
    ["private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow"],
    ["github_token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
    ["jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
    ["bearer_token", "Authorization: Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234"],
    ["url_password", "postgres://gw:s3cretpw@db/x", "s3cretpw"],
    ["secret_assignment", "DB_PASSWORD=hunter2hunter2", "hunter2hunter2"],
    ["anthropic_key", "ANTHROPIC=sk-ant-api03-abcdefghijklmnopqrstuv", "sk-ant-api03-abcdefghijklmnopqrstuv"],
  ])("masks %s and keeps kind and length", (kind, input, secret) => {
    const out = redactText(input);
    expect(out).not.toContain(secret);
    expect(out).toMatch(new RegExp(`\\[REDACTED:[a-z_0-9]+:\\d+\\]`));
    if (kind !== "secret_assignment") expect(out).toContain(`[REDACTED:`);
  });

  it("leaves ordinary text alone", () => {
    const text = "const token = getToken();\nfunction password() {}\nhello world";
    expect(redactText("hello world, see https://example.com/a")).toBe("hello world, see https://example.com/a");
    expect(redactText(text)).toContain("function password() {}");
  });

  it("masks secret-named members of argument objects whole, and registered server secrets anywhere", () => {
    registerSecret("ar_agent_server_own_token_value_123456");
    const out = redactValue({
      headers: { Authorization: "Basic dXNlcjpwYXNz", accept: "text/html" },
      password: "x",
      note: "the token is ar_agent_server_own_token_value_123456",
    });
    expect(out.headers.Authorization).toMatch(/^\[REDACTED:by_name:\d+\]$/);
    expect(out.headers.accept).toBe("text/html");
    expect(out.password).toMatch(/^\[REDACTED/);
    expect(out.note).not.toContain("ar_agent_server_own_token_value_123456");
  });
});

describe("redaction of env-style assignments", () => {
  it.each([
    ["DB_PASSWORD=hunter2hunter2", true],
    ["export API_KEY='abcd1234efgh'", true],
    ["  client_secret: s3cr3tvalue", true],
    ['"token": "abcdefghijkl",', true],
    ["password = request.form['password']", false],
    ["const token = getToken();", false],
    ["if (secret == null) return;", false],
    ["token: ${{ secrets.GITHUB_TOKEN }}", false],
  ])("%s → masked: %s", (line, masked) => {
    expect(redactText(line) !== line).toBe(masked);
  });
});
