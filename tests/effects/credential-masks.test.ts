import fs from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { resetSandboxStatus, sandboxStatus } from "@/lib/exec/sandbox";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";

/**
 * The credential families added to the sensitive list in round 7 are masked in the box: package
 * managers' and forges' token files, cluster configurations, SSH keys under other names and files
 * named as secrets read empty however a command reads them (`rev`, `tr`, an interpreter), while the
 * files a tool needs (`.yarnrc.yml`, `.bundle/config`) and look-alike sources read as they are.
 * Real bwrap, real overlay capture, as run_command runs a command.
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
  resetSandboxStatus();
  expect(sandboxStatus().available).toBe(true);
});

const MARK = "CR3DMARK";
const SECRETS: Record<string, string> = {
  "auth.json": `{"http-basic":{"x":{"password":"${MARK}-composer"}}}\n`,
  ".cargo/credentials": `token = "${MARK}-cargo-old"\n`,
  ".cargo/credentials.toml": `token = "${MARK}-cargo"\n`,
  ".gem/credentials": `:rubygems_api_key: ${MARK}-gem\n`,
  ".config/gh/hosts.yml": `github.com:\n  oauth_token: ${MARK}-gh\n`,
  kubeconfig: `token: ${MARK}-kube\n`,
  "ops/prod.kubeconfig": `token: ${MARK}-kube-named\n`,
  "deploy/deploy_rsa": `${MARK}-deploy-rsa\n`,
  "etc/ssh_host_ed25519_key": `${MARK}-host-key\n`,
  ".streamlit/secrets.toml": `password = "${MARK}-streamlit"\n`,
  "config/secrets.yml": `secret_key_base: ${MARK}-rails\n`,
  ".secrets": `TOKEN=${MARK}-act\n`,
  ".sentryclirc": `token=${MARK}-sentry\n`,
  "serviceAccountKey.json": `{"private_key":"${MARK}-gcp"}\n`,
};
const VISIBLE: Record<string, string> = {
  ".yarnrc.yml": "yarnPath: .yarn/releases/yarn-4.cjs\n",
  ".bundle/config": "BUNDLE_PATH: vendor/bundle\n",
  "deploy/deploy_rsa.pub": "ssh-rsa AAAA visible\n",
  "src/kubeconfig.go": "package k\n",
  ".github/secret-scan.yml": "on: push\n",
};

const put = (rel: string, content: string) => {
  const abs = path.join(ws.root, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, content);
};

beforeEach(() => {
  emptyWorkspace(ws);
  for (const [rel, content] of Object.entries({ ...SECRETS, ...VISIBLE })) put(rel, content);
});

const names = Object.keys(SECRETS)
  .map((n) => `'${n}'`)
  .join(" ");

describe("round 7 credential families read empty in the box", () => {
  it.each([
    ["rev", `rev ${names}`],
    ["tr (rot13)", `for f in ${names}; do tr a-zA-Z n-za-mN-ZA-M < "$f"; done`],
    ["python3 reversed", `python3 -c "import sys\nfor n in sys.argv[1:]: sys.stdout.write(open(n).read()[::-1])" ${names}`],
    ["tar to stdout", `tar cf - ${names} | tar xOf -`],
  ])("%s", async (_, command) => {
    const r = await runBoxed(ws, command, { sandbox: true });
    const out = r.result.stdout + r.result.stderr;
    for (const e of [MARK, [...MARK].reverse().join(""), "PE3QZNEX"]) expect(out, `${command} leaked (${e})`).not.toContain(e);
    expect(r.result.sandbox?.masked ?? []).toEqual(expect.arrayContaining(Object.keys(SECRETS)));
    for (const [rel, content] of Object.entries(SECRETS)) expect(fs.readFileSync(path.join(ws.root, rel), "utf8"), rel).toBe(content);
  });

  it("a tool's own settings, public keys and look-alike sources read as they are", async () => {
    const r = await runBoxed(ws, `cat ${Object.keys(VISIBLE).join(" ")}`, { sandbox: true });
    expect(r.result.stdout).toBe(Object.values(VISIBLE).join(""));
    for (const rel of Object.keys(VISIBLE)) expect(r.result.sandbox?.masked ?? []).not.toContain(rel);
  });
});
