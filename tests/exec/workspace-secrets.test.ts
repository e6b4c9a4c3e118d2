import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { resetWorkspaceSecrets, SecretScanLimitError, workspaceSecrets } from "@/lib/exec/workspace-secrets";
import { decide } from "@/lib/policy/decide";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { secretPathMatcher } from "@/lib/policy/rule-match";

/**
 * The scan that finds a workspace's secrets for the sandbox: one definition with the policy,
 * cached per workspace and revalidated by directory, never stale after a change, bounded.
 */

const base = fs.realpathSync(os.tmpdir());
const roots: string[] = [];
let root: string;
const isSecret = secretPathMatcher(DEFAULT_RULES);
const scan = (opts: Partial<Parameters<typeof workspaceSecrets>[2]> = {}) => workspaceSecrets(root, isSecret, { maxEntries: 100_000, maxMs: 10_000, ...opts });
const put = (rel: string, text = "x\n") => {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
};
/** Waits until every directory made so far is older than the racy window (its times are trusted). */
const settle = () => new Promise((r) => setTimeout(r, 1100));

beforeEach(() => {
  root = fs.mkdtempSync(path.join(base, "ar-ws-secrets-"));
  roots.push(root);
  resetWorkspaceSecrets();
});
afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

describe("one definition of a secret, shared with the policy", () => {
  it.each([
    [".env", true],
    [".env.local", true],
    ["a/b/.env.production", true],
    ["nl\ndir/.env", true],
    ["id_rsa", true],
    ["keys/id_ed25519.old", true],
    ["certs/x.pem", true],
    ["x.key", true],
    [".npmrc", true],
    [".ssh/config", true],
    [".aws/credentials", true],
    [".ENV", true],
    [".Env.prod", true],
    ["certs/LEGACY.PEM", true],
    ["certs/client.Key", true],
    ["ID_RSA", true],
    ["certs/store.P12", true],
    ["keys/vpn.ovpn", true],
    ["keys/private.asc", true],
    ["keys/SECRING.GPG", true],
    ["sig/release.tar.gz.asc", false],
    [".ENV.EXAMPLE", false],
    [".env.example", false],
    ["app/.env.sample", false],
    [".env.local.template", false],
    [".git/config", false],
    ["src/env.ts", false],
  ])("%j secret: %s, and read_file asks exactly then", async (rel, secret) => {
    expect(isSecret(rel)).toBe(secret);
    const verdict = await decide({ tool: "read_file", risk: "read", paths: [rel] }, [...DEFAULT_RULES]);
    if (secret) expect(verdict.decision).toBe("ask");
    else if (!rel.startsWith(".git/")) expect(verdict.decision).toBe("allow");
  });
});

describe("the scan", () => {
  it("finds files, secret directories whole, secret-named links; skips .git and node_modules", async () => {
    put(".env");
    put(".env.example");
    put("a/b/.env.local");
    put(".ssh/id_rsa");
    put(".ssh/sub/deeper");
    put("node_modules/pkg/test/key.pem");
    put(".git/config");
    put("src/index.ts");
    fs.symlinkSync(".env", path.join(root, ".env.link"));
    const r = await scan();
    expect(r.files.sort()).toEqual([".env", "a/b/.env.local"]);
    expect(r.dirs).toEqual([".ssh"]);
    expect(r.links).toEqual([".env.link"]);
    expect(r.exposed).toEqual([]);
  });

  it("rereads only directories that changed; a new, renamed or removed secret is seen at once", async () => {
    for (let d = 0; d < 20; d++) put(`d${d}/f.txt`);
    put("d3/.env");
    await settle();
    expect((await scan()).read).toBe(21);
    const again = await scan();
    expect(again.read).toBe(0);
    expect(again.files).toEqual(["d3/.env"]);
    put("d7/.env.local");
    let r = await scan();
    expect(r.read).toBe(1); // d7 only
    expect(r.files.sort()).toEqual(["d3/.env", "d7/.env.local"]);
    fs.renameSync(path.join(root, "d3/.env"), path.join(root, "d3/plain.txt"));
    fs.renameSync(path.join(root, "d5/f.txt"), path.join(root, "d5/server.key"));
    r = await scan();
    expect(r.files.sort()).toEqual(["d5/server.key", "d7/.env.local"]);
    // A whole directory moved into place: its contents are read as new.
    fs.mkdirSync(path.join(root, "outside"));
    fs.writeFileSync(path.join(root, "outside", ".env"), "x");
    fs.renameSync(path.join(root, "outside"), path.join(root, "d9/moved"));
    r = await scan();
    expect(r.files.sort()).toEqual(["d5/server.key", "d7/.env.local", "d9/moved/.env"]);
    fs.rmSync(path.join(root, "d7"), { recursive: true });
    expect((await scan()).files.sort()).toEqual(["d5/server.key", "d9/moved/.env"]);
  });

  it("a directory changed twice within its timestamp's granularity is read again (racy)", async () => {
    put("a/x.txt");
    await scan();
    // Just modified: the next scan reads it again whatever its mtime says.
    const st = fs.statSync(path.join(root, "a"));
    put("a/.env");
    fs.utimesSync(path.join(root, "a"), st.atime, st.mtime); // the same mtime, as a coarse clock would leave it
    expect((await scan()).files).toEqual(["a/.env"]);
  });

  it("exposed globs leave secrets visible and are reported", async () => {
    put(".env.test");
    put(".env");
    put(".aws/config");
    put(".aws/credentials");
    const r = await scan({ expose: (p) => p === ".env.test" || p === ".aws/config", exposeUnder: (d) => d === ".aws" });
    expect(r.files.sort()).toEqual([".aws/credentials", ".env"]);
    expect(r.exposed.sort()).toEqual([".aws/config", ".env.test"]);
    expect(r.dirs).toEqual([]);
  });

  it("fails closed past its entry budget, and keeps what it read", async () => {
    for (let i = 0; i < 50; i++) put(`many/f${i}`);
    const err = await scan({ maxEntries: 20 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecretScanLimitError);
    expect(err).toMatchObject({ limit: "entries" });
    expect((await scan()).entries).toBe(51);
  });

  it("fails closed past its time budget", async () => {
    for (let i = 0; i < 30; i++) put(`t${i}/f`);
    const err = await scan({ maxMs: -1 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "SecretScanLimitError", limit: "time" });
  });
});

describe("names holding a newline", () => {
  it("a recursive read (grep -r) over a secret under such a name asks, as reading it would", async () => {
    const dir = fs.mkdtempSync(path.join(base, "ar-ws-nl-"));
    roots.push(dir);
    fs.mkdirSync(path.join(dir, "nl\ndir"));
    fs.writeFileSync(path.join(dir, "nl\ndir", ".env"), "x");
    fs.writeFileSync(path.join(dir, "plain.txt"), "x");
    const ask = (command: string) =>
      decide({ tool: "run_command", risk: "exec", paths: [], boxed: true, command: { command, cwd: dir, workspaceRoot: dir, env: { PATH: "/usr/bin:/bin" } } }, [...DEFAULT_RULES]);
    expect((await ask("grep -r TOKEN plain.txt")).decision).toBe("allow");
    const verdict = await ask("grep -r TOKEN .");
    expect(verdict.decision).toBe("ask");
  });
});

describe("names that are not valid UTF-8", () => {
  const rawPath = (...parts: Array<string | number[]>) => Buffer.concat([Buffer.from(`${root}/`), ...parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p)))]);

  it("every one is reported as bytes (file, directory, link), never descended, never decoded into another name", async () => {
    put("plain.txt");
    fs.writeFileSync(rawPath(".env", [0xff]), "s");
    fs.writeFileSync(rawPath("harmless", [0xe9]), "s");
    fs.mkdirSync(rawPath(".ssh", [0x80]));
    fs.writeFileSync(rawPath(".ssh", [0x80], "/id_rsa"), "s");
    fs.mkdirSync(path.join(root, "a/b"), { recursive: true });
    fs.symlinkSync("../../plain.txt", rawPath("a/b/", [0xc3]));
    const r = await scan();
    const raw = r.raw.map((e) => ({ dir: e.dir, name: [...e.name], display: e.display, kind: e.kind })).sort((x, y) => x.display.localeCompare(y.display));
    expect(raw).toEqual([
      { dir: "", name: [...Buffer.from(".env"), 0xff], display: ".env\\xff", kind: "file" },
      { dir: "", name: [...Buffer.from(".ssh"), 0x80], display: ".ssh\\x80", kind: "dir" },
      { dir: "a/b", name: [0xc3], display: "a/b/\\xc3", kind: "link" },
      { dir: "", name: [...Buffer.from("harmless"), 0xe9], display: "harmless\\xe9", kind: "file" },
    ]);
    // Nothing under the raw directory was read; no decoded name (U+FFFD) appears anywhere.
    expect(JSON.stringify([r.files, r.dirs, r.links])).not.toContain("\ufffd");
    expect(r.files).toEqual([]);
  });

  it("valid UTF-8 beyond ASCII is matched as before, and a raw name removed leaves the list", async () => {
    put("ünï/.env");
    fs.writeFileSync(rawPath("x", [0xfe]), "s");
    expect((await scan()).files).toEqual(["ünï/.env"]);
    expect((await scan()).raw.map((e) => e.display)).toEqual(["x\\xfe"]);
    fs.rmSync(rawPath("x", [0xfe]));
    expect((await scan()).raw).toEqual([]);
  });
});

describe("git directories for the sanitized configuration", () => {
  it("reports .git directories and files and bare layouts, not their insides", async () => {
    put(".git/config");
    put("vendor/lib/.git/config");
    put("wt/.git", "gitdir: ../.git/worktrees/wt\n");
    put("mirror.git/HEAD");
    put("mirror.git/config");
    fs.mkdirSync(path.join(root, "mirror.git", "objects"));
    fs.mkdirSync(path.join(root, "mirror.git", "refs"));
    put("notbare/HEAD");
    put(".ssh/x/.git/config"); // inside a masked directory: masked whole already
    expect((await scan()).gitDirs.sort()).toEqual([".git", "mirror.git", "vendor/lib/.git", "wt/.git"]);
  });
});
