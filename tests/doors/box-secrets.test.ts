import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { runApproving, usePreset } from "@/tests/helpers/dashboard";

/**
 * Through the real product's HTTP door (`next start`): the workspace's own secrets are masked in
 * the box under the balanced and autonomous presets, where commands run without asking. Every
 * spelling below runs at once, or asks and is approved (approval never widens the box), and none
 * shows the secret's bytes; the real files stay as they were. Then the presets' large-deletion
 * check on a command's change set: balanced holds it, autonomous applies it (backed up).
 */

const mark = crypto.randomBytes(6).toString("hex");
const SECRET = `DOORSECRET${mark}`;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  const put = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(server.workspace, rel)), { recursive: true });
    fs.writeFileSync(path.join(server.workspace, rel), text);
  };
  put(".env", `API_KEY=${SECRET}-env\n`);
  put("app/.env.local", `TOKEN=${SECRET}-local\n`);
  put("deploy/id_ed25519", `${SECRET}-key\n`);
  put(".env.example", "API_KEY=\n");
}, 900_000);

afterAll(async () => {
  await server?.stop();
});

const run = (command: string) => runApproving(server, command);

const spellings = [
  "cat .env",
  "rev .env",
  "base32 .env",
  "xxd .env | head",
  "od -c .env",
  "tac app/.env.local",
  `python3 -c "print(open('.e'+'nv').read())"`,
  `node -e "process.stdout.write(require('fs').readFileSync('.'+'env'))"`,
  "ln -s .env x && cat x",
  "cp deploy/id_ed25519 k && cat k",
  "tar cf - . | grep -a -c DOORSECRET; true",
  "find . -name '.env*' -exec cat {} +",
  "grep -r DOORSECRET . ; true",
  "cat /proc/self/cwd/.env",
  "git init -q . && git add -A && git show :.env",
];

describe.each(["balanced", "autonomous"] as const)("under %s, the workspace's secrets are masked in the box", (preset) => {
  beforeAll(() => usePreset(server, preset));

  it("no spelling shows the secret; the real files are unchanged; templates show", async () => {
    let ranAtOnce = 0;
    for (const command of spellings) {
      const r = await run(command);
      expect(r.ok, `${command}: ${JSON.stringify(r.error)}`).toBe(true);
      expect(r.data.sandbox.boxed).toBe(true);
      if (!r.asked) ranAtOnce++;
      const out = r.data.stdout + r.data.stderr;
      expect(out, command).not.toContain(mark);
      expect(out, command).not.toContain([...mark].reverse().join(""));
      for (const f of r.data.changes?.files ?? []) expect([".env", "app/.env.local", "deploy/id_ed25519"]).not.toContain(f.path);
    }
    // The policy cannot see through most of these: they ran without asking.
    expect(ranAtOnce).toBeGreaterThan(5);
    expect(fs.readFileSync(path.join(server.workspace, ".env"), "utf8")).toBe(`API_KEY=${SECRET}-env\n`);
    expect(fs.readFileSync(path.join(server.workspace, "app/.env.local"), "utf8")).toBe(`TOKEN=${SECRET}-local\n`);
    // The result names what was masked, so the agent knows why .env reads empty.
    const listed = await run("ls -la .env");
    expect(listed.data.sandbox.masked).toEqual(expect.arrayContaining([".env", "app/.env.local", "deploy/id_ed25519"]));
    expect(listed.data.sandbox.masked).not.toContain(".env.example");
    expect(listed.data.stdout).toMatch(/ 0 .*\.env\n/);
    const example = await run("cat .env.example");
    expect(example.data.stdout).toBe("API_KEY=\n");
    const write = await run("echo leaked > .env; echo status=$?");
    expect(write.data.stdout).toContain("status=1");
    expect(fs.readFileSync(path.join(server.workspace, ".env"), "utf8")).toBe(`API_KEY=${SECRET}-env\n`);
    fs.rmSync(path.join(server.workspace, ".git"), { recursive: true, force: true });
  });
});

describe("a command that deletes many files", () => {
  const plant = () => {
    const dir = path.join(server.workspace, "bulk");
    fs.mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 60; i++) fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`);
  };

  it("balanced holds it for a reviewer", async () => {
    await usePreset(server, "balanced");
    plant();
    const r = await run("rm -rf bulk");
    expect(r.ok).toBe(true);
    expect(r.data.changes).toMatchObject({ status: "held", deleted: 60 });
    expect(r.data.changes.hold_reasons.join(" ")).toMatch(/deletes 60 files/);
    expect(fs.readdirSync(path.join(server.workspace, "bulk"))).toHaveLength(60);
  });

  it("autonomous applies it, every deleted file backed up", async () => {
    await usePreset(server, "autonomous");
    const r = await run("rm -rf bulk");
    expect(r.asked).toBe(false);
    expect(r.data.changes).toMatchObject({ status: "applied", deleted: 60 });
    expect(fs.existsSync(path.join(server.workspace, "bulk"))).toBe(false);
    const backups = await server.call("list_backups", { limit: 200 });
    const paths = (backups.body.data.backups as Array<{ path: string }>).map((b) => b.path).filter((p) => p.startsWith("bulk/"));
    expect(new Set(paths).size).toBe(60);
  });
});
