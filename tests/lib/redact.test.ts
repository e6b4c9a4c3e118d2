import { describe, expect, it } from "vitest";
import { markerKinds, redactText, redactValue, registerSecret, SECRET_PATTERNS } from "@/lib/redact";
import { SAMPLES } from "@/tests/lib/redact-samples";

/**
 * The redactor: one row per credential format of SECRET_PATTERNS (fake values), what
 * must stay readable, idempotence, and redaction by member name and of the server's own secrets.
 */

describe("every credential format of the table", () => {
  it.each(SAMPLES)("masks %s in %j", (kind, text, secret, masked = secret) => {
    const out = redactText(text);
    expect(out).not.toContain(secret);
    expect(out).toBe(text.replace(masked, `[REDACTED:${kind}:${masked.length}]`));
  });

  it("has a sample for every pattern", () => {
    const covered = new Set(SAMPLES.map(([kind]) => kind));
    for (const { kind } of SECRET_PATTERNS) expect(covered, kind).toContain(kind);
  });

  it("keeps the context around a secret readable", () => {
    expect(redactText("DB_PASSWORD=hunter2hunter2")).toBe("DB_PASSWORD=[REDACTED:secret_assignment:14]");
    expect(redactText("postgres://gw:s3cretpw@db/x")).toBe("postgres://gw:[REDACTED:url_password:8]@db/x");
    expect(redactText("secret=secret")).toBe("secret=[REDACTED:secret_assignment:6]");
  });

  it("masks several secrets in one text, and each occurrence", () => {
    const text = SAMPLES.map(([, t]) => t).join("\n");
    const out = redactText(text);
    for (const [, , secret] of SAMPLES) expect(out).not.toContain(secret);
    expect(redactText("AKIAIOSFODNN7EXAMPLE and AKIAIOSFODNN7EXAMPLE")).toBe("[REDACTED:aws_access_key:20] and [REDACTED:aws_access_key:20]");
  });
});

describe("what stays readable", () => {
  it.each([
    "hello world, see https://example.com/a?page=2",
    "const token = getToken();",
    "function password() {}",
    "password = request.form['password']",
    "if (secret == null) return;",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "PWD=/work/main",
    "OLDPWD=/root",
    "    12| PWD=/work/main",
    "key: value, password: see the vault",
    "Bearer short",
    "git@github.com:owner/repo.git",
    "https://user@example.com/path",
    "Basic usage: run the command",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
    "[REDACTED:aws_access_key:20]",
  ])("%j", (text) => {
    expect(redactText(text)).toBe(text);
  });
});

describe("idempotence and objects", () => {
  it("redacting twice changes nothing more", () => {
    for (const [, text] of SAMPLES) {
      const once = redactText(text);
      expect(redactText(once)).toBe(once);
    }
    const value = { headers: { authorization: "Basic dXNlcjpwYXNz" }, body: "DB_PASSWORD=hunter2hunter2" };
    expect(redactValue(redactValue(value))).toEqual(redactValue(value));
  });

  it("masks secret-named members of argument objects whole, and registered server secrets anywhere", () => {
    registerSecret("server_own_value_123456");
    const out = redactValue({
      headers: { Authorization: "Basic dXNlcjpwYXNz", accept: "text/html" },
      password: "x",
      note: "the token is server_own_value_123456",
      list: ["server_own_value_123456"],
      count: 3,
    });
    expect(out).toEqual({
      headers: { Authorization: "[REDACTED:by_name:18]", accept: "text/html" },
      password: "[REDACTED:by_name:1]",
      note: "the token is [REDACTED:server_secret:23]",
      list: ["[REDACTED:server_secret:23]"],
      count: 3,
    });
  });

  it("ignores registered values too short to be secrets", () => {
    registerSecret("short");
    expect(redactText("a short note")).toBe("a short note");
  });

  it("counts markers by kind", () => {
    expect(markerKinds(redactText("AKIAIOSFODNN7EXAMPLE\nDB_PASSWORD=hunter2hunter2\nAKIAIOSFODNN7EXAMPLF"))).toEqual({ aws_access_key: 2, secret_assignment: 1 });
    expect(markerKinds("nothing")).toEqual({});
  });
});

describe("no pattern can stall the server", () => {
  // Long runs built to make a backtracking pattern quadratic (200,000 characters each, the size
  // of a capped run_command output). A quadratic pattern would take minutes here and fail by the
  // test timeout; each input is also checked to redact idempotently.
  const n = 200_000;
  const runs: Record<string, string> = {
    letters: "a".repeat(n),
    "dashed jwt starts": "eyJ-".repeat(n / 4),
    "dotted scheme starts": "a.".repeat(n / 2),
    "sk- starts": "sk-".repeat(n / 3),
    colons: "a:".repeat(n / 2),
    "secret-looking name run": "PASSWORDx".repeat(n / 9),
    "quote then name run": `"${"secret".repeat(n / 6)}`,
    "numbered prefixes": "     1| ".repeat(n / 8),
    "grep prefixes": "f:1:".repeat(n / 4),
    "token= starts": "?token=".repeat(n / 7),
    "connection string starts": ";Password=".repeat(n / 10),
    "key block start": `-----BEGIN ${"A ".repeat(n / 2)}`,
  };
  it.each(Object.entries(runs))("%s", (_name, text) => {
    const once = redactText(text);
    expect(redactText(once)).toBe(once);
  });
});

describe("very large texts", () => {
  it("a run of millions of one letter is scanned without overflowing the regular-expression stack", () => {
    const text = "x".repeat(8_000_000);
    expect(redactText(text)).toBe(text);
  });

  it("an encoded secret straddling the boundary of two scanned stretches is still masked", () => {
    const secret = Buffer.from("aws_access_key_id AKIAIOSFODNN7EXAMPLE trailing").toString("base64");
    const at = (1 << 20) - 20; // the first stretch ends inside the encoded secret
    const text = `${". ".repeat(at / 2)}${secret}\n${". ".repeat(600_000)}`;
    const out = redactText(text);
    expect(out).not.toContain(secret);
    expect(out).toMatch(/\[REDACTED:aws_access_key:\d+\]/);
  });
});
