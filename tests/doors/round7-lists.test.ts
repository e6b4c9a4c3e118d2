import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { runApproving, usePreset } from "@/tests/helpers/dashboard";

/**
 * Round 7's list findings through the HTTP door of the real product (`next start`), an agent token
 * under `balanced` and `autonomous`:
 * - files that run later in the families the red team found missing (a ninja build file, GHCi's
 *   start-up file in a subdirectory, CaptainHook's config, go.mod) and other version-control
 *   systems' repository config (`.hg/hgrc` at the root and nested, Jujutsu's, Sapling's, Fossil's
 *   checkout file): write_file asks, and a command that plants them runs in the box and its change
 *   set is held with nothing applied;
 * - the person's credential files of the new families: read_file asks, and in the box `rev`, `tr`
 *   and an interpreter read them empty; a tool's own settings (`.yarnrc.yml`) and ordinary files
 *   still read as they are.
 */

const mark = crypto.randomBytes(6).toString("hex");
const CREDENTIALS: Record<string, string> = {
  "auth.json": `{"http-basic":{"repo.example.com":{"username":"u","password":"PW${mark}composer"}}}\n`,
  ".cargo/credentials.toml": `[registry]\ntoken = "CR${mark}cargo"\n`,
  kubeconfig: `users:\n- name: u\n  user:\n    token: KC${mark}kube\n`,
  "deploy/deploy_rsa": `-----BEGIN OPENSSH PRIVATE KEY-----\nDK${mark}deploy\n`,
  ".streamlit/secrets.toml": `password = "ST${mark}streamlit"\n`,
  "config/secrets.yml": `production:\n  secret_key_base: RS${mark}rails\n`,
};
const WAIT0 = { prefer: "wait=0" };

let server: TestServer;
const ws = () => server.workspace;
const put = (rel: string, content: string) => {
  fs.mkdirSync(path.dirname(path.join(ws(), rel)), { recursive: true });
  fs.writeFileSync(path.join(ws(), rel), content);
};

beforeAll(async () => {
  server = await startTestServer();
  for (const [rel, content] of Object.entries(CREDENTIALS)) put(rel, content);
  put(".yarnrc.yml", `yarnPath: .yarn/releases/yarn-4.cjs\n# YR${mark}yarn\n`);
  put("src/kubeconfig.go", `package k // KG${mark}source\n`);
}, 900_000);

afterAll(async () => {
  await server?.stop();
});

const RUNS_LATER = ["build.ninja", "sub/.ghci", "captainhook.json", "go.mod", ".hg/hgrc", "sub/.hg/hgrc", ".hg/sharedpath", ".jj/repo/config.toml", ".sl/config", ".fslckout"];

describe.each(["balanced", "autonomous"] as const)("under %s", (preset) => {
  beforeAll(() => usePreset(server, preset));

  it.each(RUNS_LATER)("write_file of %s asks, and nothing is written", async (rel) => {
    const r = await server.call("write_file", { path: rel, content: "[hooks]\npre-status = touch /tmp/x\n" }, WAIT0);
    expect(r.body.error?.name, JSON.stringify(r.body)).toBe("approval_pending");
    const decided = await server.reviewer("POST", `/api/approvals/${r.body.call_id}/reject`, { reason: "no" });
    expect(decided.status).toBe(200);
    expect(fs.existsSync(path.join(ws(), rel)), rel).toBe(false);
  });

  it("a command planting a Mercurial repository's hooks, Jujutsu's and Sapling's config, a ninja file and a nested .ghci runs in the box and is held", async () => {
    for (const command of [
      `mkdir -p .hg/store && printf 'revlogv1\\nstore\\n' > .hg/requires && printf '[hooks]\\npre-status = touch /tmp/rt7-hg-${mark}\\n' > .hg/hgrc`,
      `mkdir -p sub/.hg && printf '[extensions]\\npwn = tools/pwn.py\\n' > sub/.hg/hgrc`,
      `mkdir -p .jj/repo .sl && printf '[ui]\\npager = "sh x"\\n' > .jj/repo/config.toml && printf '[hooks]\\n' > .sl/config`,
      `printf 'rule r\\n  command = touch /tmp/rt7-ninja\\nbuild out: r\\n' > build.ninja && mkdir -p sub && printf ':! touch /tmp/rt7-ghci\\n' > sub/.ghci`,
      `printf 'module x\\n\\nreplace example.com/y => ./y\\n' > go.mod && printf '{"pre-commit":{"enabled":true}}\\n' > captainhook.json`,
    ]) {
      const r = await server.call("run_command", { command }, WAIT0);
      expect(r.body.data?.changes?.status, `${command}: ${JSON.stringify(r.body)}`).toBe("held");
      expect(r.body.data.changes.hold_reasons.join(" ")).toMatch(/runs later/);
      const decided = await server.reviewer("POST", `/api/approvals/${r.body.call_id}/reject`, { reason: "no" });
      expect(decided.status).toBe(200);
    }
    for (const f of [".hg", "sub/.hg", ".jj", ".sl", "build.ninja", "sub/.ghci", "go.mod", "captainhook.json"]) expect(fs.existsSync(path.join(ws(), f)), f).toBe(false);
  });

  it.each(Object.keys(CREDENTIALS))("read_file of %s asks", async (rel) => {
    const r = await server.call("read_file", { path: rel }, WAIT0);
    expect(r.body.error?.name, JSON.stringify(r.body)).toBe("approval_pending");
    expect(JSON.stringify(r.body)).not.toContain(mark);
    await server.reviewer("POST", `/api/approvals/${r.body.call_id}/reject`, { reason: "no" });
  });

  it("the box reads every credential file empty, however it is read; a tool's settings and sources read as they are", async () => {
    const names = Object.keys(CREDENTIALS).join(" ");
    for (const command of [
      `rev ${names}`,
      `for f in ${names}; do tr a-zA-Z n-za-mN-ZA-M < "$f"; done`,
      `python3 -c "import sys\nfor n in sys.argv[1:]: sys.stdout.write(open(n).read()[::-1])" ${names}`,
      `wc -c ${names}`,
    ]) {
      // A reviewer's yes (where the policy asks, as for the loop's redirect) never widens the box.
      const r = await runApproving(server, command);
      expect(r.ok, `${command}: ${JSON.stringify(r.error)}`).toBe(true);
      const out = r.data.stdout + r.data.stderr;
      expect(out, command).not.toContain(mark);
      expect(out, command).not.toContain([...mark].reverse().join(""));
      if (command.startsWith("wc")) for (const rel of Object.keys(CREDENTIALS)) expect(out, rel).toMatch(new RegExp(`\\b0 ${rel.replace(/[.]/g, "\\.")}`));
    }
    const visible = await server.call("run_command", { command: "cat .yarnrc.yml src/kubeconfig.go" }, WAIT0);
    expect(visible.body.data.stdout).toContain(`YR${mark}yarn`);
    expect(visible.body.data.stdout).toContain(`KG${mark}source`);
    expect(visible.body.data.sandbox.masked).toEqual(expect.arrayContaining(Object.keys(CREDENTIALS)));
  });
});
