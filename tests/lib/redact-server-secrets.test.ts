import { afterEach, describe, expect, it } from "vitest";
import { checkPresetCredentials } from "@/lib/auth/tokens";
import { redactServerSecrets, redactServerSecretsValue, redactText, redactValue, registerSecret, secretSpellings } from "@/lib/redact";

/**
 * The gateway's own secrets (unit level; the doors are tests/doors/agent-tokens.test.ts): the
 * preset credentials are masked from the environment alone in every module instance, in the
 * spellings `secretSpellings` promises, whether or not a policy relaxed masking; and malformed
 * preset credentials are refused before start.
 */

const saved = { ...process.env };
afterEach(() => {
  for (const key of ["AGENT_REACH_AGENT_TOKEN", "AGENT_REACH_REVIEWER_TOKEN", "AGENT_REACH_REVIEWER_PASSWORD"]) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

describe("server secrets", () => {
  it("masks a preset password taken from the environment without any registration", () => {
    process.env.AGENT_REACH_REVIEWER_PASSWORD = "correct horse battery";
    expect(redactServerSecrets("pw is correct horse battery!")).toBe("pw is [REDACTED:server_secret:21]!");
  });

  it("holds across module instances: the store lives on globalThis", async () => {
    registerSecret("shared-between-bundles-42");
    const store = (globalThis as { agentReachServerSecrets?: { secrets: Set<string> } }).agentReachServerSecrets;
    expect(store?.secrets.has("shared-between-bundles-42")).toBe(true);
  });

  it.each([
    ["upper case", (s: string) => s.toUpperCase()],
    ["base64", (s: string) => Buffer.from(s).toString("base64")],
    ["base64 at offset 1", (s: string) => Buffer.from(`a${s}`).toString("base64")],
    ["base64 at offset 2", (s: string) => Buffer.from(`ab${s}`).toString("base64")],
    ["base64url", (s: string) => Buffer.from(`ab${s}`).toString("base64url")],
    ["hex", (s: string) => Buffer.from(s).toString("hex")],
    ["HEX", (s: string) => Buffer.from(s).toString("hex").toUpperCase()],
    ["percent-encoded", (s: string) => encodeURIComponent(s)],
  ])("masks the %s spelling", (_label, spell) => {
    const secret = "pa ss/wo+rd?=é-7781";
    process.env.AGENT_REACH_REVIEWER_PASSWORD = secret;
    const out = redactServerSecrets(`before ${spell(secret)} after`);
    // Only what depends on the secret alone is masked; nothing long enough to matter is left.
    expect(out).toContain("[REDACTED:server_secret:");
    for (const s of secretSpellings(secret)) expect(out.toLowerCase()).not.toContain(s.toLowerCase());
  });

  it("masks in values, member names included, and survives relaxed masking", () => {
    process.env.AGENT_REACH_AGENT_TOKEN = "ar_agent_preset_0123456789abcdefghij";
    const data = { content: "x ar_agent_preset_0123456789abcdefghij y", list: [{ ["ar_agent_preset_0123456789abcdefghij"]: 1 }], n: 3 };
    const out = JSON.stringify(redactServerSecretsValue(data));
    expect(out).not.toContain("preset_0123456789");
    expect(JSON.stringify(redactValue(data))).not.toContain("preset_0123456789");
  });

  it("is idempotent and leaves other text alone", () => {
    process.env.AGENT_REACH_REVIEWER_PASSWORD = "hunter2hunter2";
    const once = redactText("a hunter2hunter2 b");
    expect(redactText(once)).toBe(once);
    expect(redactServerSecrets("nothing to see")).toBe("nothing to see");
  });

  it("recognises generated reviewer passwords and session secrets by their prefix", () => {
    expect(redactText("pw ar_pw_AbCdEfGhIjKlMnOpQrStUvWx")).toBe("pw [REDACTED:agent_reach_token:30]");
    expect(redactText("ar_ses_AbCdEfGhIjKlMnOpQrStUvWx")).toBe("[REDACTED:agent_reach_token:31]");
  });
});

describe("preset credentials are checked before start", () => {
  it.each([
    [{ AGENT_REACH_AGENT_TOKEN: "plain-token-without-prefix-0123456789" }, /AGENT_REACH_AGENT_TOKEN is not an agent token: "ar_agent_"/],
    [{ AGENT_REACH_AGENT_TOKEN: "ar_rev_0123456789abcdefghijklmnop" }, /AGENT_REACH_AGENT_TOKEN/],
    [{ AGENT_REACH_AGENT_TOKEN: "ar_agent_short" }, /at least 20/],
    [{ AGENT_REACH_AGENT_TOKEN: "ar_agent_0123456789abcdefghij with space" }, /AGENT_REACH_AGENT_TOKEN/],
    [{ AGENT_REACH_REVIEWER_TOKEN: "ar_agent_0123456789abcdefghijklmnop" }, /AGENT_REACH_REVIEWER_TOKEN is not a reviewer API token: "ar_rev_"/],
    [{ AGENT_REACH_REVIEWER_TOKEN: "0123456789abcdefghijklmnopqrstuvwxyz" }, /AGENT_REACH_REVIEWER_TOKEN/],
    [{ AGENT_REACH_REVIEWER_PASSWORD: "short" }, /AGENT_REACH_REVIEWER_PASSWORD is not a password of 8 to 200 characters/],
    [{ AGENT_REACH_REVIEWER_PASSWORD: " padded password " }, /AGENT_REACH_REVIEWER_PASSWORD/],
  ])("refuses %j", (env, message) => {
    expect(() => checkPresetCredentials(env)).toThrow(message);
    expect(() => checkPresetCredentials(env)).toThrow(/Refusing to start/);
  });

  it("accepts well-formed ones and an empty environment", () => {
    expect(() =>
      checkPresetCredentials({
        AGENT_REACH_AGENT_TOKEN: "ar_agent_test_0123456789abcdefghijklmnopqrstuvwxyz",
        AGENT_REACH_REVIEWER_TOKEN: "ar_rev_test_0123456789abcdefghijklmnopqrstuvwxyz",
        AGENT_REACH_REVIEWER_PASSWORD: "test-reviewer-password",
      }),
    ).not.toThrow();
    expect(() => checkPresetCredentials({})).not.toThrow();
  });
});
