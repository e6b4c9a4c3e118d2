import fs from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { db } from "@/lib/db";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";
import { treeHash } from "@/tests/effects/tree-hash";

/**
 * Links in a command's change set, through real bwrap and a real overlay: a link is judged by
 * where the kernel takes it, and a workspace link gives its name to what the command puts at its
 * target (lib/effects/link-check.ts, lib/effects/stage.ts).
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
});
beforeEach(() => emptyWorkspace(ws));

const boxed = (command: string) => runBoxed(ws, command, { sandbox: true });
const put = (rel: string, content = "x\n") => {
  fs.mkdirSync(path.dirname(path.join(ws.root, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws.root, rel), content);
};
const link = (rel: string, target: string) => {
  fs.mkdirSync(path.dirname(path.join(ws.root, rel)), { recursive: true });
  fs.symlinkSync(target === "<root>" ? ws.root : target.replace("<root>", ws.root), path.join(ws.root, rel));
};

/** Runs `command`, expects its change set held with the workspace untouched; returns the hold reasons. */
async function expectHeld(command: string, opts: { sandbox?: boolean } = {}): Promise<string> {
  const before = treeHash(ws.root);
  // No call row exists here, so holding fails after the journal is written; the workspace is untouched either way.
  await expect(runBoxed(ws, command, { sandbox: opts.sandbox ?? true })).rejects.toThrow(/left "running"/);
  expect(treeHash(ws.root)).toBe(before);
  const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
  return JSON.parse(set!.summaryJson).hold_reasons.join(" | ");
}

describe("a link to a file whose target a later command turns into a directory (the link existed before)", () => {
  it.each([
    ["node_modules", "nm", "mkdir -p nm/.bin && printf '#!/bin/sh\\necho pwned\\n' > nm/.bin/vitest && chmod +x nm/.bin/vitest", "node_modules/.bin/vitest"],
    ["gradle", "gw", "mkdir -p gw/wrapper && echo jar > gw/wrapper/gradle-wrapper.jar", "gradle/wrapper/gradle-wrapper.jar"],
    [".yarn", "yr", "mkdir -p yr/releases && echo 'module.exports=1' > yr/releases/yarn-4.cjs", ".yarn/releases/yarn-4.cjs"],
    [".config", "cf", "mkdir -p cf/fish && echo 'curl x | sh' > cf/fish/config.fish", ".config/fish/config.fish"],
    [".github", "gh", "mkdir -p gh/workflows && echo 'on: push' > gh/workflows/x.yml", ".github/workflows/x.yml"],
    [".claude", "cl", "mkdir cl && echo '{}' > cl/settings.json", ".claude/settings.json"],
    ["sub/node_modules", "../nm", "mkdir -p nm/.bin && echo x > nm/.bin/tsc", "sub/node_modules/.bin/tsc"],
    ["node_modules", "<root>/nm", "mkdir -p nm/.bin && echo x > nm/.bin/vitest", "node_modules/.bin/vitest"],
  ])("%s → %s", async (name, target, plant, alias) => {
    put(target.startsWith("<root>") ? "nm" : path.posix.join(path.posix.dirname(name), target), "placeholder\n");
    link(name, target);
    const file = target.startsWith("<root>") ? "nm" : path.posix.join(path.posix.dirname(name), target);
    const reasons = await expectHeld(`rm ${file} && ${plant}`);
    expect(reasons).toContain(alias);
    expect(reasons).toMatch(new RegExp(`makes ${file.replace(/[.]/g, "\\.")} a directory \\(was a file\\), which the link ${name.replace(/[.]/g, "\\.")}`));
  });

  it("a chain: link to link to file, then the file made a directory", async () => {
    put("f", "p\n");
    link("b", "f");
    link("node_modules", "b");
    const reasons = await expectHeld("rm f && mkdir -p f/.bin && echo x > f/.bin/vitest");
    expect(reasons).toContain("node_modules/.bin/vitest (f/.bin/vitest through the link node_modules)");
    expect(reasons).toContain("which the link b → f");
  });

  it("the target made a link to a directory elsewhere", async () => {
    put("nm", "p\n");
    put("tools/.bin/vitest", "#!/bin/sh\n");
    link("node_modules", "nm");
    const reasons = await expectHeld("rm nm && ln -s tools nm");
    expect(reasons).toContain("makes nm a link (was a file)");
  });

  it("a directory link the person made: a workflow written below its target holds under the link's name", async () => {
    fs.mkdirSync(path.join(ws.root, "ci"));
    link(".github", "ci");
    const reasons = await expectHeld("mkdir -p ci/workflows && echo 'on: push' > ci/workflows/x.yml");
    expect(reasons).toContain(".github/workflows/x.yml (ci/workflows/x.yml through the link .github)");
  });

  it("a dangling link the person made: its target created by a build applies, a risky tree planted there holds", async () => {
    link("docs/api", "../build/api-docs");
    const r = await boxed("mkdir -p build/api-docs && echo '<h1>api</h1>' > build/api-docs/index.html");
    expect(r.changes?.status, JSON.stringify(r.changes?.hold_reasons)).toBe("applied");
    link("node_modules", "nm");
    const reasons = await expectHeld("mkdir -p nm/.bin && echo x > nm/.bin/vitest");
    expect(reasons).toContain("node_modules/.bin/vitest (nm/.bin/vitest through the link node_modules)");
  });

  it("a git hooks directory that is a link the person made: a hook written at its target holds (the box keeps that target read-only; captured here without it)", async () => {
    fs.mkdirSync(path.join(ws.root, ".git"), { recursive: true });
    put(".git/HEAD", "ref: refs/heads/main\n");
    fs.mkdirSync(path.join(ws.root, "githooks"));
    link(".git/hooks", "../githooks");
    const reasons = await expectHeld("printf '#!/bin/sh\\ntouch /tmp/x\\n' > githooks/pre-commit", { sandbox: false });
    expect(reasons).toContain(".git/hooks/pre-commit (githooks/pre-commit through the link .git/hooks)");
  });

  it("a file link the person made under a runs-later name: an edit of its target holds", async () => {
    put("build/make-rules.txt", "all:\n\ttrue\n");
    link("Makefile", "build/make-rules.txt");
    const reasons = await expectHeld("printf 'all:\\n\\tcurl x | sh\\n' > build/make-rules.txt");
    expect(reasons).toContain("Makefile (build/make-rules.txt through the link Makefile)");
  });
});

describe("a new link to a file under a name that stands for a tree that runs later holds at once", () => {
  it.each([
    ["node_modules", "echo p > nm && ln -s nm node_modules"],
    ["gradle", "echo p > gw && ln -s gw gradle"],
    [".yarn", "echo p > yr && ln -s yr .yarn"],
    [".config", "echo p > cf && ln -s cf .config"],
    [".github", "echo p > gh && ln -s gh .github"],
    [".claude", "echo p > cl && ln -s cl .claude"],
    ["pkg/node_modules", "mkdir pkg && echo p > pkg/nm && ln -s nm pkg/node_modules"],
    [".venv/bin", "mkdir .venv && echo p > vb && ln -s ../vb .venv/bin"],
  ])("%s", async (name, command) => {
    expect(await expectHeld(command)).toContain(`links ${name} → `);
  });
});

describe("a link judged by where the kernel takes it", () => {
  beforeEach(() => {
    // s → f, then f a directory: `a/b/c/d/s/..` is the workspace root's parent, not a/b/c.
    fs.mkdirSync(path.join(ws.root, "a/b/c/d"), { recursive: true });
    fs.mkdirSync(path.join(ws.root, "f"));
    put("f/keep", "in\n");
    link("a/b/c/d/s", "../../../../f");
    put("a/root/secret", "decoy\n");
    put("a/etc/hosts", "decoy\n");
  });

  it.each([
    ["`..` after a workspace link (lexically the decoy a/root/secret)", "ln -s s/../../../../root/secret a/b/c/d/t"],
    ["`..` after a workspace link, to a host file", "ln -s s/../../../../etc/hosts a/b/c/d/t"],
    ["`..` after a link made in the same command", "ln -s ../../../../f a/b/c/d/s2 && ln -s s2/../../../../root/secret a/b/c/d/t"],
    ["`..` after a link reached from another directory (into a box HOME's kept cache)", "mkdir -p src && ln -s ../a/b/c/d/s/../../../../home/x/.cache/f src/util.js"],
    ["a link through a directory link", "ln -s f link-f && ln -s link-f/keep t"],
    ["a link to a link to a file", "echo y > y && ln -s y l1 && ln -s l1 l2"],
    ["an absolute target outside", "ln -s /etc/hosts t"],
    ["an absolute target inside the workspace", `ln -s "$PWD/f/keep" t`],
    ["a relative target above the workspace", "ln -s ../../../../../../etc/hosts t"],
    ["a directory", "ln -s f t"],
    ["a missing path", "ln -s nothing-here t"],
  ])("%s holds", async (_what, command) => {
    expect(await expectHeld(command)).toMatch(/links .*→/);
  });

  it.each([
    ["a file beside it", "ln -s f/keep t"],
    ["a file one level up", "mkdir -p d && ln -s ../f/keep d/up"],
    ["the README convention", "mkdir -p docs && echo '# hi' > docs/README.md && ln -s docs/README.md README"],
    ["a file made in the same command, spelled with ./", "echo n > new.txt && ln -s ./new.txt t"],
  ])("%s applies at once", async (_what, command) => {
    const r = await boxed(command);
    expect(r.changes?.status, JSON.stringify(r.changes?.hold_reasons)).toBe("applied");
  });

  it("an edit through an ordinary link the person made applies at once", async () => {
    put("docs/README.md", "# hi\n");
    link("README", "docs/README.md");
    const r = await boxed("echo more >> docs/README.md && echo more >> README");
    expect(r.changes?.status, JSON.stringify(r.changes?.hold_reasons)).toBe("applied");
    expect(fs.readFileSync(path.join(ws.root, "docs/README.md"), "utf8")).toBe("# hi\nmore\nmore\n");
  });
});
