import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { searchFilesTool, SearchFilesInput, type SearchFilesOutput } from "@/lib/tools/search-files";
import type { PolicyRuleData } from "@/lib/policy/types";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { makeToolContext, type TestContext } from "@/tests/helpers/tool-context";

function search(ctx: TestContext, args: Record<string, unknown>): Promise<SearchFilesOutput> {
  return searchFilesTool.run(SearchFilesInput.parse(args), ctx);
}

/** Sensitive files (one per default rule family) and their names as search_files reports them. */
const SENSITIVE: Array<[path: string, rule: string]> = [
  [".env", "default:sensitive-env"],
  [".env.local", "default:sensitive-env"],
  ["app/.env.production", "default:sensitive-env-nested"],
  ["keys/id_ed25519", "default:sensitive-ssh-keys"],
  ["keys/id_rsa.bak", "default:sensitive-ssh-keys"],
  ["deploy/server.pem", "default:sensitive-pem"],
  ["deploy/tls.key", "default:sensitive-key"],
  ["home/.ssh/config", "default:sensitive-ssh-dir"],
  ["ci/.npmrc", "default:sensitive-netrc"],
  ["ops/.aws/credentials", "default:sensitive-cloud-credentials"],
  ["store/app.p12", "default:sensitive-keystores"],
];

describe("search_files skips files a sensitive-path rule covers", () => {
  let f: Fixture;
  let ctx: TestContext;
  beforeEach(async () => {
    f = await makeFixture();
    ctx = makeToolContext(f.ws);
    for (const [p] of SENSITIVE) await f.put(p, "PASSWORD=hunter2\nSECRET=abc\nb3BlbnNzaC1rZXktdjEAAAA\n");
    await f.put("src/app.ts", "const PASSWORD_FIELD = 'password';\n");
  });
  afterEach(() => f.cleanup());

  it.each([
    ["PASSWORD|b3Bl|SECRET", true],
    ["SECRET=abc", false],
    ["b3Bl", false],
  ])("query %s returns no line of a sensitive file", async (query, regex) => {
    const out = await search(ctx, { query, regex, path: "." });
    const paths = out.matches!.map((m) => m.path);
    for (const [p] of SENSITIVE) expect(paths).not.toContain(p);
    expect(JSON.stringify(out.matches)).not.toMatch(/SECRET=abc|b3Bl|hunter2/);
    expect(out.files_skipped.sensitive).toBe(SENSITIVE.length);
    expect(out.note).toMatch(/read_file/);
    expect(new Map(out.sensitive_skipped!.map((s) => [s.path, s.rule]))).toEqual(new Map(SENSITIVE));
  });

  it.each(SENSITIVE)("skips %s even when path points at its directory (rule %s)", async (p) => {
    const dir = p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : ".";
    const out = await search(ctx, { query: "SECRET", path: dir });
    expect(out.matches!.filter((m) => m.path === p)).toEqual([]);
    expect(out.files_skipped.sensitive).toBeGreaterThanOrEqual(1);
  });

  it("still finds text in ordinary files, with nothing skipped", async () => {
    const out = await search(ctx, { query: "PASSWORD", path: "src" });
    expect(out.matches!.map((m) => m.path)).toEqual(["src/app.ts"]);
    expect(out.files_skipped.sensitive).toBe(0);
    expect(out.note).toBeUndefined();
  });

  it("follows the policy in force: a rule the operator adds is honoured, a disabled one is not", async () => {
    await f.put("notes/private.txt", "SECRET=abc\n");
    const extra: PolicyRuleData = { id: "op:private", priority: 5, tool: "*", pathGlob: "notes/**", command: null, decision: "ask", note: "private", enabled: true };
    const disabledEnv = DEFAULT_RULES.map((r) => (r.id.startsWith("default:sensitive-env") ? { ...r, enabled: false } : r));
    ctx.policyRules = [...disabledEnv, extra];
    const out = await search(ctx, { query: "SECRET=abc" });
    const paths = out.matches!.map((m) => m.path);
    expect(paths).not.toContain("notes/private.txt");
    expect(paths).toContain(".env");
    expect(paths).toContain("app/.env.production");
    expect(paths).not.toContain("keys/id_ed25519");
  });

  it("lists sensitive files by name in pattern mode (names are not contents)", async () => {
    const out = await search(ctx, { pattern: "**/.env*" });
    expect(out.files).toContain(".env");
    expect(out.files_skipped.sensitive).toBe(0);
  });
});
