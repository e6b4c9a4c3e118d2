import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { db } from "@/lib/db";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { diskView, gitDirsAbove, hasGitDirShape, overlayView, type ShapeType } from "@/lib/policy/git-shape";
import { insideGitDirectory } from "@/lib/policy/decide";
import { repositoryTrust } from "@/lib/policy/git-repo";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";
import { treeHash } from "@/tests/effects/tree-hash";

/**
 * A repository planted over several commands (its parts in any order, any directory name, any
 * depth) is judged by its shape as each change set leaves the workspace: its config, hooks,
 * attributes, commondir and alternates are held as inside `.git`, and so is the change set that
 * completes the shape around a config or hooks left earlier. Ordinary git work still applies.
 * Real overlay capture, real SQLite, real bash and git.
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
});
beforeEach(() => emptyWorkspace(ws));

const run = (command: string) => runBoxed(ws, command);

/** Runs `command` and expects its change set held (no call row: holding fails after the journal), the workspace untouched; returns the reasons. */
async function held(command: string): Promise<string> {
  const before = treeHash(ws.root);
  await expect(run(command)).rejects.toThrow(/left "running"/);
  expect(treeHash(ws.root)).toBe(before);
  const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
  return (JSON.parse(set!.summaryJson).hold_reasons as string[]).join("\n");
}

async function applied(command: string): Promise<void> {
  const r = await run(command);
  expect(r.changes?.status, JSON.stringify(r.changes?.hold_reasons)).toBe("applied");
}

const FSMONITOR = `printf "[core]\\n\\tbare = false\\n\\tfsmonitor = \\"touch /tmp/pwned; false\\"\\n"`;

describe("the shape of a git directory, in a view of the workspace", () => {
  const view = (entries: Record<string, ShapeType>) => (rel: string) => entries[rel] ?? null;
  it.each([
    [{ "d/HEAD": "file", "d/objects": "dir", "d/refs": "dir" }, true],
    [{ "d/HEAD": "symlink", "d/objects": "symlink", "d/refs": "file" }, true],
    [{ "d/HEAD": "file", "d/commondir": "file" }, true],
    [{ "d/HEAD": "file", "d/gitdir": "file" }, true],
    [{ "d/HEAD": "dir", "d/objects": "dir", "d/refs": "dir" }, false],
    [{ "d/HEAD": "file", "d/objects": "dir" }, false],
    [{ "d/objects": "dir", "d/refs": "dir", "d/config": "file" }, false],
  ] as const)("%j → %s", (entries, want) => {
    expect(hasGitDirShape("d", view(entries))).toBe(want);
  });
  it("every shaped ancestor is found, nearest first, the root included", () => {
    const v = view({ HEAD: "file", objects: "dir", refs: "dir", "a/b/HEAD": "file", "a/b/commondir": "file" });
    expect(gitDirsAbove("a/b/hooks/x", v)).toEqual(["a/b", ""]);
    expect(gitDirsAbove("a/c", v)).toEqual([""]);
  });
  it("a change set's view: created paths and their parents exist, deleted ones and what is below them do not", () => {
    fs.mkdirSync(path.join(ws.root, "old/objects"), { recursive: true });
    fs.writeFileSync(path.join(ws.root, "old/HEAD"), "ref: refs/heads/main\n");
    const after = overlayView(diskView(ws.root), new Map<string, ShapeType>([["old/refs/heads/main", "file"], ["gone", null]]));
    expect(after("old/refs")).toBe("dir");
    expect(hasGitDirShape("old", after)).toBe(true);
    expect(hasGitDirShape("old", diskView(ws.root))).toBe(false);
    const deleted = overlayView(diskView(ws.root), new Map<string, ShapeType>([["old", null]]));
    expect(deleted("old/HEAD")).toBeNull();
  });
  it("the policy's write check uses the same shape: the write that completes it counts", async () => {
    fs.mkdirSync(path.join(ws.root, "lib/objects"), { recursive: true });
    fs.mkdirSync(path.join(ws.root, "lib/refs"), { recursive: true });
    fs.writeFileSync(path.join(ws.root, "lib/config"), "[core]\n\tfsmonitor = x\n");
    expect(await insideGitDirectory(ws.root, "lib/HEAD")).toBe("lib");
    expect(await insideGitDirectory(ws.root, "lib/index.js")).toBeNull();
    fs.writeFileSync(path.join(ws.root, "lib/HEAD"), "ref: refs/heads/main\n");
    expect(await insideGitDirectory(ws.root, "lib/hooks/pre-commit")).toBe("lib");
    expect(await insideGitDirectory(ws.root, "lib/deep/er/x")).toBe("lib");
  });
});

describe("git commands in a directory of that shape use an untrusted repository", () => {
  it.each([
    ["objects and refs as directories", () => { fs.mkdirSync(path.join(ws.root, "p/objects"), { recursive: true }); fs.mkdirSync(path.join(ws.root, "p/refs")); }],
    ["objects as an executable file, refs as a link", () => { fs.mkdirSync(path.join(ws.root, "p")); fs.writeFileSync(path.join(ws.root, "p/objects"), "", { mode: 0o755 }); fs.symlinkSync("..", path.join(ws.root, "p/refs")); }],
    ["a commondir beside HEAD", () => { fs.mkdirSync(path.join(ws.root, "p")); fs.writeFileSync(path.join(ws.root, "p/commondir"), "../.git\n"); }],
  ])("%s", async (_name, make) => {
    make();
    fs.writeFileSync(path.join(ws.root, "p/HEAD"), "ref: refs/heads/main\n");
    fs.mkdirSync(path.join(ws.root, "p/src"));
    const t = await repositoryTrust(path.join(ws.root, "p/src"), ws.root, { GIT_CEILING_DIRECTORIES: path.dirname(ws.root) });
    expect(t.trusted ? "" : t.why).toMatch(/git would use p as a bare repository planted in the workspace/);
  });
});

describe("a repository planted over two commands is held, in either order", () => {
  it.each([
    ["shape first, then config (fsmonitor)", "lib", `mkdir -p lib/objects lib/refs/heads && echo "ref: refs/heads/main" > lib/HEAD && echo x > lib/index.js`, `${FSMONITOR} > lib/config`, /lib\/config is the config of a repository planted at lib\//],
    ["shape first, nested deep, then an alias", "a/b/c", `mkdir -p a/b/c/objects a/b/c/refs && echo "ref: refs/heads/main" > a/b/c/HEAD`, `printf "[alias]\\n\\tst = !touch /tmp/pwned2\\n" > a/b/c/config`, /a\/b\/c\/config is the config of a repository planted/],
    ["shape first, then a hook", "pkg", `mkdir -p pkg/objects pkg/refs && echo "ref: refs/heads/main" > pkg/HEAD`, `mkdir -p pkg/hooks && printf "#!/bin/sh\\ntouch /tmp/pwned\\n" > pkg/hooks/pre-commit && chmod +x pkg/hooks/pre-commit`, /pkg\/hooks\/pre-commit installs a git hook/],
    ["shape first, then info/attributes", "pkg", `mkdir -p pkg/objects pkg/refs && echo "ref: refs/heads/main" > pkg/HEAD`, `mkdir -p pkg/info && echo "* filter=x" > pkg/info/attributes`, /pkg\/info\/attributes names git filters/],
    ["shape first, then alternates", "pkg", `mkdir -p pkg/objects/info pkg/refs && echo "ref: refs/heads/main" > pkg/HEAD`, `echo /tmp/o > pkg/objects/info/alternates`, /pkg\/objects\/info\/alternates makes git read objects from "\/tmp\/o"/],
    ["a worktree-shaped directory (HEAD + gitdir), then config.worktree", "wt", `mkdir -p wt && echo "ref: refs/heads/main" > wt/HEAD && echo /x/.git > wt/gitdir`, `${FSMONITOR} > wt/config.worktree`, /wt\/config\.worktree is the config of a repository planted at wt\//],
    ["config first, then the shape", "pkg", `mkdir -p pkg && printf "[alias]\\n\\tst = !touch /tmp/pwned2\\n" > pkg/config`, `mkdir -p pkg/objects pkg/refs && echo "ref: refs/heads/main" > pkg/HEAD`, /pkg\/config was already there and pkg now has the shape of a git repository/],
    ["config first, then HEAD last", "x/y", `mkdir -p x/y/objects x/y/refs && ${FSMONITOR} > x/y/config`, `echo "ref: refs/heads/main" > x/y/HEAD`, /x\/y\/config was already there/],
    ["hooks first, then the shape", "pkg", `mkdir -p pkg/hooks && printf "#!/bin/sh\\ntouch /tmp/pwned\\n" > pkg/hooks/post-checkout`, `mkdir -p pkg/objects pkg/refs && echo "ref: refs/heads/main" > pkg/HEAD`, /pkg\/hooks\/ \(post-checkout\) was already there/],
    ["attributes first, then a commondir completes it", "pkg", `mkdir -p pkg/info && echo "* filter=x" > pkg/info/attributes && echo "ref: refs/heads/main" > pkg/HEAD`, `echo ../.git > pkg/commondir`, /pkg\/info\/attributes was already there/],
    ["config first, objects and refs as files and links", "pkg", `mkdir -p pkg && ${FSMONITOR} > pkg/config && echo "ref: refs/heads/main" > pkg/HEAD && echo o > o`, `printf '#!/bin/sh\\n' > pkg/objects && chmod +x pkg/objects && ln -s ../o pkg/refs`, /pkg\/config was already there/],
  ])("%s", async (_name, _dir, first, second, want) => {
    await applied(first);
    expect(await held(second)).toMatch(want);
  });

  it("a bare repository moved into place in one command is held for its config", async () => {
    await applied(`mkdir -p stage/objects stage/refs && echo "ref: refs/heads/main" > stage/HEAD && printf "[core]\\n\\tbare = true\\n" > stage/config`);
    expect(await held(`${FSMONITOR} > stage/config.new && mv stage lib && mv lib/config.new lib/config`)).toMatch(/lib\/config is the config of a repository planted at lib\//);
  });
});

describe("ordinary git work still applies", () => {
  it("git init in a subdirectory (inert config, hook samples) and a commit there", async () => {
    await applied("mkdir proj && cd proj && git init -q && echo a > a && git add a && git -c user.name=t -c user.email=t@t commit -qm one");
    expect(fs.existsSync(path.join(ws.root, "proj/.git/HEAD"))).toBe(true);
    await applied("cd proj && echo b > b && git add b && git -c user.name=t -c user.email=t@t commit -qm two");
  });
  it("a bare clone with an inert config applies; files beside a bare repository's shape that are not its internals apply", async () => {
    execFileSync("git", ["init", "-q", "src"], { cwd: ws.root });
    await applied("git clone -q --bare src mirror.git");
    await applied("echo note > mirror.git/description && mkdir -p mirror.git/notes && echo n > mirror.git/notes/x");
  });
  it("a git add and commit in the workspace's own repository", async () => {
    execFileSync("git", ["init", "-q", "-b", "main"], { cwd: ws.root });
    await applied("echo x > file.txt && git add file.txt && git -c user.name=t -c user.email=t@t commit -qm x");
  });
});
