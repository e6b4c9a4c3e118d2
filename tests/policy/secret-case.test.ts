import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide } from "@/lib/policy/decide";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { ruleGlobMatches, secretPathMatcher, sensitivePathRule } from "@/lib/policy/rule-match";
import type { PolicyInput, PolicyRuleData } from "@/lib/policy/types";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { decideCommand, rule } from "@/tests/policy/fixtures";

/**
 * Secret paths in any letter case: the globs of ask and deny rules ignore case, so `.ENV`,
 * `certs/LEGACY.PEM` or `ID_RSA` ask for every tool (read_file, search_files, list_directory, the
 * shell's path checks) and are masked in the sandbox like their lower-case spellings. Allow rules
 * and grants keep matching case-sensitively: no spelling widens what they allow.
 */

const input = (tool: string, paths: string[]): PolicyInput => ({ tool, risk: tool === "write_file" ? "write" : "read", paths });
const isSecret = secretPathMatcher(DEFAULT_RULES);

/** [path, the default rule that asks for it] */
const SECRETS: Array<[string, string]> = [
  [".ENV", "default:sensitive-env"],
  [".Env", "default:sensitive-env"],
  [".Env.prod", "default:sensitive-env"],
  [".ENV.LOCAL", "default:sensitive-env"],
  ["config/.ENV.Production", "default:sensitive-env-nested"],
  ["certs/LEGACY.PEM", "default:sensitive-pem"],
  ["certs/Server.Pem", "default:sensitive-pem"],
  ["certs/client.Key", "default:sensitive-key"],
  ["SERVER.KEY", "default:sensitive-key"],
  ["ID_RSA", "default:sensitive-ssh-keys"],
  ["keys/Id_Ed25519", "default:sensitive-ssh-keys"],
  ["home/.SSH/config", "default:sensitive-ssh-dir"],
  ["certs/store.P12", "default:sensitive-keystores"],
  ["CERT.PFX", "default:sensitive-keystores"],
  ["app/Release.Keystore", "default:sensitive-keystores"],
  [".NPMRC", "default:sensitive-netrc"],
  ["deploy/.AWS/credentials", "default:sensitive-cloud-credentials"],
  ["Credentials.JSON", "default:sensitive-credential-files"],
  ["prod.TFVARS", "default:sensitive-credential-files"],
  ["vault.KDBX", "default:sensitive-credential-files"],
  ["keys/vpn.ovpn", "default:sensitive-vpn-profiles"],
  ["keys/Office.OVPN", "default:sensitive-vpn-profiles"],
  ["keys/private.asc", "default:sensitive-pgp-private-keys"],
  ["keys/my-PRIVATE-key.ASC", "default:sensitive-pgp-private-keys"],
  ["keys/secret-subkeys.asc", "default:sensitive-pgp-private-keys"],
  ["keys/secring.gpg", "default:sensitive-pgp-private-keys"],
  ["keys/SECRING.GPG", "default:sensitive-pgp-private-keys"],
  ["home/.gnupg/private-keys-v1.d/AB.key", "default:sensitive-key"],
  ["home/.gnupg/pubring.kbx", "default:sensitive-pgp-private-keys"],
  ["Server.PEM.BAK", "default:sensitive-secret-copies"],
  ["PROD.ENV", "default:sensitive-secret-copies"],
];

/** Paths that stay plain reads (templates, public signatures, look-alikes). */
const PLAIN = [".ENV.EXAMPLE", "config/.Env.Sample", "release.tar.gz.asc", "KEYS.asc", "pubring.gpg", "src/Key.ts", "docs/PEM.md", "environment.ts", "README.md"];

describe("secret paths in any letter case", () => {
  it.each(SECRETS)("read_file %s asks (%s)", async (p, ruleId) => {
    const v = await decide(input("read_file", [p]), [...DEFAULT_RULES]);
    expect(v.decision).toBe("ask");
    expect(v.rule?.id).toBe(ruleId);
    expect(v.risks?.some((r) => r.kind === "reads_secret")).toBe(true);
  });

  it.each(SECRETS)("the sandbox mask, search_files and list_directory cover %s", async (p, ruleId) => {
    expect(isSecret(p)).toBe(true);
    expect(sensitivePathRule(p, DEFAULT_RULES)?.id).toBe(ruleId);
    expect(sensitivePathRule(p, DEFAULT_RULES, "search_files")?.id).toBe(ruleId);
    expect((await decide(input("list_directory", [p]), [...DEFAULT_RULES])).decision).toBe("ask");
    expect((await decide(input("write_file", [p]), [...DEFAULT_RULES])).rule?.id).toBe(ruleId);
  });

  it.each(PLAIN)("%s stays a plain read", async (p) => {
    expect(isSecret(p)).toBe(false);
    expect(sensitivePathRule(p, DEFAULT_RULES)).toBeNull();
    expect((await decide(input("read_file", [p]), [...DEFAULT_RULES])).decision).toBe("allow");
  });

  it("an operator's deny rule matches in any case; an allow rule only in its own", async () => {
    const deny = rule("op:deny-secrets", { tool: "*", pathGlob: "secrets/**" }, "deny", 5);
    const allow = rule("op:allow-docs", { tool: "write_file", pathGlob: "docs/**" }, "allow", 5);
    expect((await decide(input("read_file", ["SECRETS/db.txt"]), [...DEFAULT_RULES, deny])).decision).toBe("deny");
    expect((await decide(input("read_file", ["Secrets/db.txt"]), [...DEFAULT_RULES, deny])).decision).toBe("deny");
    // (alone: the default write_file rule asks for every path)
    expect((await decide(input("write_file", ["docs/a.md"]), [allow])).decision).toBe("allow");
    expect((await decide(input("write_file", ["DOCS/a.md"]), [allow])).decision).toBe("ask");
    expect(ruleGlobMatches(allow, "Docs/a.md")).toBe(false);
    expect(ruleGlobMatches(deny, "sEcReTs/x")).toBe(true);
  });

  it("an allow rule or grant spelled in upper case never lifts the ask of a secret", async () => {
    const allowUpper = rule("op:allow-pem", { tool: "read_file", pathGlob: "certs/*.PEM" }, "allow", 5);
    const v = await decide(input("read_file", ["certs/LEGACY.PEM"]), [...DEFAULT_RULES, allowUpper]);
    expect(v.decision).toBe("ask");
    expect(v.rule?.id).toBe("default:sensitive-pem");
  });
});

describe("the shell's path checks use the same matcher", () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await makeFixture();
    await fx.put(".ENV", "CASE_SECRET=abc\n");
    await fx.put(".Env.prod", "X=envrcsecret\n");
    await fx.put("certs/LEGACY.PEM", "-----BEGIN PRIVATE KEY-----\nMIIE\n");
    await fx.put("certs/client.Key", "key\n");
    await fx.put("certs/store.P12", "P12BINARYSECRET\n");
    await fx.put("ID_RSA", "-----BEGIN OPENSSH PRIVATE KEY-----\n");
    await fx.put("src/app.ts", "export const x = 1;\n");
  });
  afterAll(() => fx.cleanup());

  const run = (command: string, boxed = false) => decideCommand(fx, command, [...DEFAULT_RULES], fx.ws, { boxed });

  it.each([
    ["cat .ENV", ".ENV"],
    ["cat .Env.prod", ".Env.prod"],
    ["head -n 2 certs/LEGACY.PEM", "certs/LEGACY.PEM"],
    ["wc -c certs/client.Key", "certs/client.Key"],
    ["cat certs/store.P12", "certs/store.P12"],
    ["sed -n 2p ID_RSA", "ID_RSA"],
    ["cat certs/*", "certs/"],
    ["grep -r BEGIN certs", "certs/"],
    ["grep -r SECRET .", "."],
  ])("%s asks", async (command, named) => {
    for (const boxed of [false, true]) {
      const v = await run(command, boxed);
      expect(v.decision).toBe("ask");
      expect(v.reasons.join("\n")).toContain(named);
    }
  });

  it("reads of ordinary files stay allowed", async () => {
    expect((await run("cat src/app.ts")).decision).toBe("allow");
    expect((await run("grep -r export src")).decision).toBe("allow");
  });
});
