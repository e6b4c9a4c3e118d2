import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyRows } from "@/lib/effects/apply";
import { afterView, expandBraces, climbsOnlyAtStart, forgetLinkScans, LINK_SCAN_REUSE_MS, linkNamesOf, linkNamesWorkspaceFile, linkViews, probeChildren, resolveLink, scanLinks } from "@/lib/effects/link-check";
import type { ChangeEntry, EntryState } from "@/lib/effects/read-change-set";
import { linkNameHoldsTree } from "@/lib/effects/stage";

/**
 * Links judged by physical resolution against a real directory tree (lib/effects/link-check.ts):
 * the change set's entries are written by hand, the workspace is on disk.
 */

let root: string;
const put = (rel: string, content = "x\n") => {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), content);
};
const link = (rel: string, target: string) => {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.symlinkSync(target, path.join(root, rel));
};
const file: EntryState = { type: "file", mode: 0o644, size: 2 };
const dir: EntryState = { type: "dir", mode: 0o755, size: 0 };
const sym = (target: string): EntryState => ({ type: "symlink", mode: 0o777, size: 0, link: target });
const entry = (p: string, before: EntryState | null, after: EntryState | null): ChangeEntry => ({
  path: p,
  kind: after === null ? "deleted" : after.type === "symlink" ? "symlink" : after.type === "dir" ? "dir_created" : before ? "modified" : "created",
  before,
  after,
});

beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-links-")));
  put("docs/README.md");
  put("keep.txt");
  put("f");
  fs.mkdirSync(path.join(root, "a/b/c/d"), { recursive: true });
  put("a/root/secret", "decoy\n");
  link("a/b/c/d/s", "../../../../f");
  link("README", "docs/README.md");
  link("dl", "docs");
  link("up", "..");
  put("wasfile");
  execFileSync("mkfifo", [path.join(root, "fifo")]);
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("a new link applies only when it names a regular file through plain directories", () => {
  it.each<[string, string, string, ChangeEntry[], boolean]>([
    ["a file beside it", "README2", "docs/README.md", [], true],
    ["a file one level up", "d/up", "../keep.txt", [entry("d", null, dir)], true],
    ["a file spelled with ./ and //", "x", "./docs//README.md", [], true],
    ["a file by a `..` after a plain directory (lexically inside, but judged once)", "a/b/x", "c/../../../keep.txt", [], false],
    ["a file by a `..` after a directory in node_modules", "node_modules/a/b/c/d/e/L", "D/../../../../../../../keep.txt", [entry("node_modules/a/b/c/d/e/D", null, dir)], false],
    ["a file the change set creates", "x", "new.txt", [entry("new.txt", null, file)], true],
    ["a file climbing out and back in", "a/b/x", "../../keep.txt", [], true],
    ["`..` after a workspace link (lexically a/root/secret, physically outside)", "a/b/c/d/t", "s/../../../../root/secret", [], false],
    ["`..` after a link of the same change set", "a/b/c/d/t", "s2/../../../../root/secret", [entry("a/b/c/d/s2", null, sym("../../../../f"))], false],
    ["`..` after a link to the parent", "x", "up/keep.txt", [], false],
    ["an absolute path inside the workspace", "x", "/docs/README.md", [], false],
    ["an absolute path outside", "x", "/etc/hosts", [], false],
    ["a path above the workspace", "x", "../outside", [], false],
    ["a deep climb above the workspace", "a/b/x", "../../../etc/hosts", [], false],
    ["a directory", "x", "docs", [], false],
    ["a directory spelled with a trailing slash", "x", "docs/README.md/", [], false],
    ["a file followed by /.", "x", "docs/README.md/.", [], false],
    ["a directory by ..", "x", "docs/..", [], false],
    ["the root by .", "x", ".", [], false],
    ["a missing path", "x", "missing", [], false],
    ["a link to a link to a file", "x", "README", [], false],
    ["a file through a directory link", "x", "dl/README.md", [], false],
    ["a file the change set deletes", "x", "keep.txt", [entry("keep.txt", file, null)], false],
    ["a file whose directory the change set made a link", "x", "docs/README.md", [entry("docs", dir, sym("/etc"))], false],
    ["a file the change set turned into a directory", "x", "wasfile", [entry("wasfile", file, dir)], false],
    ["a name below a file the change set turned into a directory (fresh: only its entries exist)", "x", "wasfile/y", [entry("wasfile", file, dir)], false],
    ["a name below such a directory that the change set lists", "x", "wasfile/y", [entry("wasfile", file, dir), entry("wasfile/y", null, file)], true],
    ["a FIFO", "x", "fifo", [], false],
    ["itself", "x", "x", [entry("x", null, sym("x"))], false],
    ["an empty target", "x", "", [], false],
  ])("%s", async (_what, rel, target, entries, expected) => {
    expect(await linkNamesWorkspaceFile(afterView(root, entries), rel, target)).toBe(expected);
  });
});

describe("a link target that climbs only at its start: `..`s first, then names", () => {
  it.each([
    ["keep.txt", true],
    ["docs/README.md", true],
    ["../keep.txt", true],
    ["../../../vitest/vitest.mjs", true],
    ["../.pnpm/vitest@3.0.0/node_modules/vitest/vitest.mjs", true],
    ["..foo/x", true],
    ["x..", true],
    ["./x", true],
    ["x//y/./z", true],
    ["./../x", true],
    ["..", true],
    ["", false],
    ["/etc/hosts", false],
    ["/", false],
    ["D/../x", false],
    ["D/../../../../root/x", false],
    ["D/./../x", false],
    ["D//../x", false],
    ["../a/../b", false],
    ["a/b/..", false],
    ["a/..", false],
  ])("%j → %s", (target, expected) => {
    expect(climbsOnlyAtStart(target)).toBe(expected);
  });

  it("the three-step retype through node_modules: the first link is held when made", async () => {
    // The target climbs through a directory that a later change set could make a link (inside
    // node_modules, where links are not walked): judged once, it must not depend on it.
    const view = afterView(root, [entry("node_modules/a/b/c/d/e/D", null, dir), entry("root", null, dir), entry("root/rt7-secret.txt", null, file)]);
    expect(await linkNamesWorkspaceFile(view, "node_modules/a/b/c/d/e/L", "D/../../../../../../../root/rt7-secret.txt")).toBe(false);
    // The same file climbing only at the start applies: nothing it passes through can take it outside later.
    expect(await linkNamesWorkspaceFile(view, "node_modules/a/b/c/d/e/L", "../../../../../../root/rt7-secret.txt")).toBe(true);
  });
});

describe("resolveLink follows links as the kernel does", () => {
  it("`..` after a link climbs from where the link led", async () => {
    const r = await resolveLink(afterView(root, []), "a/b/c/d/t", "s/../../../../root/secret");
    expect(r.end).toBeNull(); // s → f (a file): nothing below it
    const r2 = await resolveLink(afterView(root, []), "x", "up/keep.txt");
    expect(r2.end).toBeNull(); // up → .. leaves the workspace
    const r3 = await resolveLink(afterView(root, []), "x", "dl/README.md");
    expect(r3).toMatchObject({ end: "docs/README.md", endType: "file", deps: ["dl", "docs", "docs/README.md"] });
  });

  it("an absolute target under the root counts; a chain is followed; a loop ends", async () => {
    expect(await resolveLink(afterView(root, []), "x", `${root}/docs/README.md`)).toMatchObject({ end: "docs/README.md", endType: "file" });
    expect(await resolveLink(afterView(root, []), "x", "README")).toMatchObject({ end: "docs/README.md", deps: ["README", "docs", "docs/README.md"] });
    const loop = afterView(root, [entry("l1", null, sym("l2")), entry("l2", null, sym("l1"))]);
    expect((await resolveLink(loop, "x", "l1")).end).toBeNull();
  });
});

describe("linkViews: the names links give changed paths, and targets whose type changes", () => {
  it("node_modules → nm, then nm turned from a file into a directory holding .bin/vitest", async () => {
    const view = afterView(root, [entry("nm", file, dir), entry("nm/.bin", null, dir), entry("nm/.bin/vitest", null, file)]);
    const { aliases, retyped } = await linkViews(view, [{ path: "node_modules", target: "nm" }]);
    expect(aliases.map((a) => a.alias)).toEqual(expect.arrayContaining(["node_modules", "node_modules/.bin", "node_modules/.bin/vitest"]));
    expect(retyped).toEqual([expect.objectContaining({ link: "node_modules", path: "nm", from: "file", to: "dir" })]);
  });

  it("a type change read from an upper layer comes as a deletion and a creation of one path: merged", async () => {
    const view = afterView(root, [entry("nm", file, null), entry("nm", null, dir), entry("nm/.bin", null, dir), entry("nm/.bin/vitest", null, file)]);
    expect(view.entries.get("nm")).toMatchObject({ before: file, after: dir });
    const { retyped } = await linkViews(view, [{ path: "node_modules", target: "nm" }]);
    expect(retyped).toEqual([expect.objectContaining({ path: "nm", from: "file", to: "dir" })]);
    expect(await linkNamesWorkspaceFile(view, "x", "nm/.bin/vitest")).toBe(true);
    expect(await linkNamesWorkspaceFile(view, "x", "nm/README")).toBe(false);
  });

  it("a chain: every link resolving through the retyped path is named", async () => {
    link("gradle", "g2");
    link("g2", "a/b/c/d/s");
    const view = afterView(root, [entry("f", file, dir), entry("f/wrapper", null, dir)]);
    const { retyped } = await linkViews(view, [
      { path: "gradle", target: "g2" },
      { path: "g2", target: "a/b/c/d/s" },
    ]);
    expect(retyped.map((r) => `${r.link}:${r.path}`).sort()).toEqual(["g2:f", "gradle:f"]);
  });

  it("a directory link the person made: a file created below its target gets the link's name", async () => {
    const { aliases, retyped } = await linkViews(afterView(root, [entry("docs/workflows/x.yml", null, file)]), [{ path: ".github", target: "docs" }]);
    expect(aliases).toEqual([{ alias: ".github/workflows/x.yml", path: "docs/workflows/x.yml", link: ".github" }]);
    expect(retyped).toEqual([]);
  });

  it("a name given to a name: .github → ci while ci/workflows → ../wf makes wf/x.yml .github/workflows/x.yml", async () => {
    fs.mkdirSync(path.join(root, "ci"));
    fs.mkdirSync(path.join(root, "wf"));
    link("ci/workflows", "../wf");
    const { aliases } = await linkViews(afterView(root, [entry("wf/x.yml", null, file)]), [
      { path: ".github", target: "ci" },
      { path: "ci/workflows", target: "../wf" },
    ]);
    expect(aliases.map((a) => a.alias)).toEqual(["ci/workflows/x.yml", ".github/workflows/x.yml"]);
    expect(aliases.every((a) => a.path === "wf/x.yml")).toBe(true);
  });

  it("a link to the root names everything, a few rounds deep and no more", async () => {
    const { aliases, incomplete } = await linkViews(afterView(root, [entry("keep.txt", file, file)]), [{ path: "self", target: "." }]);
    expect(aliases.map((a) => a.alias)).toEqual(["self/keep.txt", "self/self/keep.txt", "self/self/self/keep.txt", "self/self/self/self/keep.txt"]);
    expect(incomplete).toBe(false);
  });

  it("a link that climbs out of the workspace and comes back in still gives its name", async () => {
    link("back", `../${path.basename(root)}/docs`);
    const { aliases } = await linkViews(afterView(root, [entry("docs/workflows/y.yml", null, file)]), [{ path: "back", target: `../${path.basename(root)}/docs` }]);
    expect(aliases.map((a) => a.alias)).toEqual(["back/workflows/y.yml"]);
  });

  it("an edit of a linked file is seen under the link's name and changes no type", async () => {
    const { aliases, retyped } = await linkViews(afterView(root, [entry("docs/README.md", file, file)]), [{ path: "README", target: "docs/README.md" }]);
    expect(aliases).toEqual([{ alias: "README", path: "docs/README.md", link: "README" }]);
    expect(retyped).toEqual([]);
  });

  it("a link the change set removes, or one below a replaced directory, is not the workspace's any more", async () => {
    const gone = await linkViews(afterView(root, [entry("README", sym("docs/README.md"), null), entry("docs/README.md", file, dir)]), [{ path: "README", target: "docs/README.md" }]);
    expect(gone.retyped).toEqual([]);
    const below = await linkViews(afterView(root, [entry("a", dir, file), entry("f", file, dir)]), [{ path: "a/b/c/d/s", target: "../../../../f" }]);
    expect(below.retyped).toEqual([]);
  });
});

describe("scanLinks", () => {
  it("finds links anywhere but inside node_modules and git's object store, and never follows one", async () => {
    link("node_modules/.bin", "../tools");
    link("node_modules/pkg/inner", "x");
    link(".git/hooks", "../hooks");
    link(".git/objects/ab/l", "x");
    link("deep/er/still/l", "../../../keep.txt");
    const r = await scanLinks(root);
    expect(r.complete).toBe(true);
    const paths = r.links.map((l) => l.path);
    expect(paths).toEqual(expect.arrayContaining(["README", "dl", "up", "a/b/c/d/s", "node_modules/.bin", ".git/hooks", "deep/er/still/l"]));
    expect(paths).not.toContain("node_modules/pkg/inner");
    expect(paths).not.toContain(".git/objects/ab/l");
    expect(r.links.find((l) => l.path === "up")?.target).toBe("..");
    expect((await scanLinks(root, 3)).complete).toBe(false);
  });
});

describe("the names a link may not take even to a file", () => {
  it("the probes come from the globs themselves", () => {
    expect(expandBraces("**/{a,b/{c,d}}/x")).toEqual(["**/a/x", "**/b/c/x", "**/b/d/x"]);
    const probes = probeChildren(["**/{node_modules/.bin/**,.venv/bin/**}", "**/{gradle/wrapper/**,.yarn/releases/**}", "**/.config/fish/**"]);
    expect(probes).toEqual(expect.arrayContaining([".bin/x", "wrapper/x", "releases/x", "fish/x", "x"]));
  });

  it.each([
    "node_modules", "packages/a/node_modules", "node_modules/.bin", "gradle", "gradle/wrapper", ".yarn", ".yarn/releases", ".yarn/plugins", ".config", ".config/fish",
    ".github", ".github/workflows", "sub/.github", ".claude", ".vscode", ".husky", ".venv", ".venv/lib", ".venv/bin", "venv", ".cargo", ".mvn",
    ".ssh", ".aws", ".storybook", ".devcontainer", ".circleci", ".gitlab-ci", ".bashrc.d", ".junie",
  ])("%s holds a tree", (name) => {
    expect(linkNameHoldsTree(name)).toBe(true);
  });

  it.each(["README", "docs", "src", "lib", "bin", "nm", "notes.txt", "packages/a", "dist", "wrapper", "releases", "fish"])("%s does not", (name) => {
    expect(linkNameHoldsTree(name)).toBe(false);
  });
});

describe("the walk a write tool reuses (linkNamesOf)", () => {
  it("is reused for LINK_SCAN_REUSE_MS, and dropped when a change set is applied there", async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-link-reuse-")));
    try {
      fs.mkdirSync(path.join(dir, "build"));
      fs.writeFileSync(path.join(dir, "build/rules.txt"), "all:\n");
      expect(await linkNamesOf(dir, ["build/rules.txt"])).toEqual([]);
      // The person makes a link outside the gateway: a reused walk does not see it yet.
      fs.symlinkSync("build/rules.txt", path.join(dir, "Makefile"));
      expect(await linkNamesOf(dir, ["build/rules.txt"])).toEqual([]);
      // Applying a change set in that workspace drops the walk (an empty one is enough).
      await applyRows(dir, [], { bytes: () => Promise.reject(new Error("no bytes needed")) });
      expect(await linkNamesOf(dir, ["build/rules.txt"])).toEqual(["Makefile"]);
      // A walk made afresh (past the reuse time, or after forgetLinkScans) sees the person's links.
      fs.symlinkSync("build", path.join(dir, "out"));
      forgetLinkScans();
      expect((await linkNamesOf(dir, ["build/rules.txt"])).sort()).toEqual(["Makefile", "out/rules.txt"]);
      expect(LINK_SCAN_REUSE_MS).toBeLessThanOrEqual(2000);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
