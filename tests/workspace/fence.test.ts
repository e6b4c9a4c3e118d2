import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolError } from "@/lib/errors";
import type { Workspace } from "@/lib/tools/define-tool";
import {
  canonicalRoot,
  isInside,
  openForRead,
  resolveInWorkspace,
  validatePathString,
  type FencedPath,
} from "@/lib/workspace/fence";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";

/** The ToolError a promise or function fails with (fails the test when it does not). */
async function failure(run: () => unknown): Promise<ToolError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }
  throw new Error("expected a ToolError, got success");
}

function workspaceAt(configuredRoot: string, root: string): Workspace {
  return { id: "ws_test", root, configuredRoot };
}

describe("validatePathString (C05)", () => {
  const cases: Array<[string, string, string | null]> = [
    ["empty", "", "empty"],
    ["NUL byte (C05-4)", "notes.txt\u0000.png", "nul_byte"],
    ["newline (C05-5)", "notes\nfake-log-line.txt", "control_char"],
    ["escape sequence (C05-5)", "notes\u001b[2J.txt", "control_char"],
    ["carriage return", "a\rb", "control_char"],
    ["tab", "a\tb", "control_char"],
    ["DEL", "a\u007fb", "control_char"],
    ["C1 control", "a\u0085b", "control_char"],
    ["line separator", "a\u2028b", "control_char"],
    ["bidi override", "invoice\u202etxt.exe", "control_char"],
    ["backslash traversal (C05-3)", "..\\proj-out\\secret.txt", "backslash"],
    ["backslash inside a name", "a\\b.txt", "backslash"],
    ["drive letter (C05-8)", "C:\\Windows\\win.ini", "windows_drive_or_unc"],
    ["drive letter with slash", "C:/Windows/win.ini", "windows_drive_or_unc"],
    ["drive-relative", "c:notes.txt", "windows_drive_or_unc"],
    ["UNC (C05-8)", "\\\\server\\share\\x.txt", "windows_drive_or_unc"],
    ["UNC with slashes", "//server/share/x.txt", "windows_drive_or_unc"],
    ["NTFS stream type", "notes.txt::$DATA", "ads_stream"],
    ["named NTFS stream with type", "notes.txt:hidden:$DATA", "ads_stream"],
    ["lone high surrogate", "a\ud83d.txt", "invalid_unicode"],
    ["lone low surrogate", "\ude00b.txt", "invalid_unicode"],
    ["path too long", "a/".repeat(2100), "too_long"],
    ["component too long", "x".repeat(256), "too_long"],
    ["plain relative", "src/app.ts", null],
    ["dot", ".", null],
    ["percent-encoded is a literal name", "%2e%2e/proj-out/secret.txt", null],
    ["tilde is a literal name", "~/secret.txt", null],
    ["variable is a literal name", "$HOME/.bashrc", null],
    ["fullwidth dots are literal", "\uff0e\uff0e\uff0fproj-out\uff0fsecret.txt", null],
    ["emoji (a valid pair)", "\u{1F600}.txt", null],
    ["colon on POSIX", "notes.txt:hidden", null],
    ["absolute POSIX", "/tmp/x", null],
    ["triple slash is not UNC", "///tmp/x", null],
  ];
  it.each(cases)("%s", async (_name, raw, reason) => {
    if (reason === null) {
      expect(() => validatePathString(raw, "linux")).not.toThrow();
      return;
    }
    const err = await failure(() => validatePathString(raw, "linux"));
    expect(err.errorName).toBe("path_invalid");
    expect(err.detail).toMatchObject({ reason, path_raw: raw });
  });

  it.each([["notes.txt:hidden"], ["dir:x/file.txt"]])("refuses a named stream %s on a Windows host (C05-8)", async (raw) => {
    const err = await failure(() => validatePathString(raw, "win32"));
    expect(err.detail.reason).toBe("ads_stream");
  });
});

describe("isInside", () => {
  const cases: Array<[string, string, boolean]> = [
    ["/r/proj", "/r/proj", true],
    ["/r/proj", "/r/proj/a/b", true],
    ["/r/proj", "/r/proj/..foo", true],
    ["/r/proj", "/r/proj-out/secret.txt", false],
    ["/r/proj", "/r/projX", false],
    ["/r/proj", "/r/proj_evil/sub", false],
    ["/r/proj", "/r", false],
    ["/r/proj", "/", false],
    ["/", "/anything", true],
  ];
  it.each(cases)("isInside(%s, %s) = %s", (root, candidate, expected) => {
    expect(isInside(root, candidate)).toBe(expected);
  });
});

describe("resolveInWorkspace", () => {
  let f: Fixture;
  let ws: Workspace;
  beforeEach(async () => {
    f = await makeFixture();
    ws = workspaceAt(f.ws, f.ws);
    await fs.mkdir(path.join(f.root, "proj_evil"));
    await fs.mkdir(path.join(f.root, "projX"));
    await fs.symlink(path.join(f.root, "proj-out/secret.txt"), f.at("leak.txt"));
    await fs.symlink("..", f.at("up"));
    await fs.symlink(path.join(f.root, "proj-out"), f.at("ext"));
    await fs.symlink("notes.txt", f.at("alias.txt"));
    await fs.symlink(path.join(f.root, "proj-out/created.txt"), f.at("dangle"));
    await fs.symlink("inside-new.txt", f.at("dangle-in"));
    await fs.symlink("loop-b", f.at("loop-a"));
    await fs.symlink("loop-a", f.at("loop-b"));
    await fs.symlink("self", f.at("self"));
    await fs.symlink("chain-2", f.at("chain-1"));
    await fs.symlink("chain-3", f.at("chain-2"));
    await fs.symlink("notes.txt", f.at("chain-3"));
    await fs.symlink("chain-out-2", f.at("chain-out-1"));
    await fs.symlink("leak.txt", f.at("chain-out-2"));
    await f.put("sub/inner.txt", "inner\n");
    await fs.symlink("../notes.txt", f.at("sub/rel-up.txt"));
    await fs.symlink("../../proj-out/secret.txt", f.at("sub/rel-out.txt"));
    await fs.symlink(f.at("sub"), f.at("sub-abs"));
    await fs.symlink(path.join(f.root, "hop"), f.at("via-outside"));
    await fs.symlink(f.at("notes.txt"), path.join(f.root, "hop"));
    await fs.symlink(path.join(f.root, "proj-out/missing-dir/x.txt"), f.at("dangle-deep"));
    await fs.symlink("sub/../notes.txt", f.at("dotdot-target"));
  });
  afterEach(() => f.cleanup());

  type Expect =
    | { relative: string; kind: FencedPath["kind"]; viaSymlink?: boolean; missingDepth?: number }
    | { error: "path_outside_workspace"; reason: "lexical" | "symlink" | "parent_symlink" }
    | { error: "path_invalid"; reason: string }
    | { error: "not_found"; reason: string };

  const cases: Array<[string, (f: Fixture) => string, Expect]> = [
    // C01: prefix siblings
    ["C01-1 relative into the prefix sibling", () => "../proj-out/secret.txt", { error: "path_outside_workspace", reason: "lexical" }],
    ["C01-2 absolute into the prefix sibling", (x) => path.join(x.root, "proj-out/secret.txt"), { error: "path_outside_workspace", reason: "lexical" }],
    ["C01-3 absolute new file in projX", (x) => path.join(x.root, "projX/new.txt"), { error: "path_outside_workspace", reason: "lexical" }],
    ["C01-4 relative new file in proj_evil", () => "../proj_evil/sub/new.txt", { error: "path_outside_workspace", reason: "lexical" }],
    ["C01 absolute to the sibling directory itself", (x) => path.join(x.root, "proj-out"), { error: "path_outside_workspace", reason: "lexical" }],
    ["C01-7 absolute inside (control)", (x) => path.join(x.ws, "notes.txt"), { relative: "notes.txt", kind: "file" }],
    ["C01 absolute root itself", (x) => x.ws, { relative: "", kind: "directory" }],
    ["C01 absolute root with trailing slash", (x) => `${x.ws}/`, { relative: "", kind: "directory" }],
    ["bare ..", () => "..", { error: "path_outside_workspace", reason: "lexical" }],
    ["filesystem root", () => "/", { error: "path_outside_workspace", reason: "lexical" }],
    ["/etc/passwd", () => "/etc/passwd", { error: "path_outside_workspace", reason: "lexical" }],
    ["outside file next to the root", () => "../notes.txt", { error: "path_outside_workspace", reason: "lexical" }],
    ["absolute with .. back out", (x) => `${x.ws}/../proj-out/secret.txt`, { error: "path_outside_workspace", reason: "lexical" }],
    // C02: symlinks inside that point outside
    ["C02-1 absolute symlink to an outside file", () => "leak.txt", { error: "path_outside_workspace", reason: "symlink" }],
    ["C02-2 relative symlink to the parent", () => "up/proj-out/secret.txt", { error: "path_outside_workspace", reason: "symlink" }],
    ["C02-3 new file in a symlinked outside dir", () => "ext/new.txt", { error: "path_outside_workspace", reason: "symlink" }],
    ["C02 existing file in a symlinked outside dir", () => "ext/secret.txt", { error: "path_outside_workspace", reason: "symlink" }],
    ["C02 the outside dir link itself", () => "ext", { error: "path_outside_workspace", reason: "symlink" }],
    ["C02 parent link itself", () => "up", { error: "path_outside_workspace", reason: "symlink" }],
    ["C02-6 symlink that stays inside (control)", () => "alias.txt", { relative: "notes.txt", kind: "file", viaSymlink: true }],
    ["chain of links ending inside", () => "chain-1", { relative: "notes.txt", kind: "file", viaSymlink: true }],
    ["chain of links ending outside", () => "chain-out-1", { error: "path_outside_workspace", reason: "symlink" }],
    ["relative link with .. staying inside", () => "sub/rel-up.txt", { relative: "notes.txt", kind: "file", viaSymlink: true }],
    ["relative link with .. leaving", () => "sub/rel-out.txt", { error: "path_outside_workspace", reason: "symlink" }],
    ["absolute link to an inside dir", () => "sub-abs/inner.txt", { relative: "sub/inner.txt", kind: "file", viaSymlink: true }],
    ["link whose target passes outside and comes back", () => "via-outside", { relative: "notes.txt", kind: "file", viaSymlink: true }],
    ["link target with .. inside it", () => "dotdot-target", { relative: "notes.txt", kind: "file", viaSymlink: true }],
    ["up/proj/notes.txt comes back inside", () => "up/proj/notes.txt", { relative: "notes.txt", kind: "file", viaSymlink: true }],
    // C03: missing paths, dangling links, .. after a link
    ["C03-1 dangling link to outside", () => "dangle", { error: "path_outside_workspace", reason: "symlink" }],
    ["dangling link to outside with a missing dir", () => "dangle-deep", { error: "path_outside_workspace", reason: "symlink" }],
    ["C03-2 missing dirs under an outside link", () => "ext/a/b/new.txt", { error: "path_outside_workspace", reason: "parent_symlink" }],
    ["missing dir under the parent link", () => "up/new-dir/x.txt", { error: "path_outside_workspace", reason: "parent_symlink" }],
    ["dangling link that stays inside", () => "dangle-in", { relative: "inside-new.txt", kind: "missing", viaSymlink: true, missingDepth: 1 }],
    ["new file", () => "new.txt", { relative: "new.txt", kind: "missing", missingDepth: 1 }],
    ["new file in new dirs", () => "new/deep/file.txt", { relative: "new/deep/file.txt", kind: "missing", missingDepth: 3 }],
    ["C03-3 .. after a link is lexical (inside)", () => "ext/../notes.txt", { relative: "notes.txt", kind: "file", viaSymlink: false }],
    ["parent is a file", () => "notes.txt/x", { error: "not_found", reason: "parent_not_directory" }],
    // loops: a clean error, never internal
    ["two-link loop", () => "loop-a", { error: "path_invalid", reason: "symlink_loop" }],
    ["self loop", () => "self", { error: "path_invalid", reason: "symlink_loop" }],
    ["loop as a parent", () => "loop-a/x.txt", { error: "path_invalid", reason: "symlink_loop" }],
    // C05 spellings
    ["C05-1 .. after a subdir", () => "sub/../../proj-out/secret.txt", { error: "path_outside_workspace", reason: "lexical" }],
    ["C05-2 percent-encoded dots are literal", () => "%2e%2e/proj-out/secret.txt", { relative: "%2e%2e/proj-out/secret.txt", kind: "missing", missingDepth: 3 }],
    ["C05-2 percent-encoded slashes are literal", () => "..%2fproj-out%2fsecret.txt", { relative: "..%2fproj-out%2fsecret.txt", kind: "missing", missingDepth: 1 }],
    ["C05-3 backslashes", () => "..\\proj-out\\secret.txt", { error: "path_invalid", reason: "backslash" }],
    ["C05-4 NUL", () => "notes.txt\u0000.png", { error: "path_invalid", reason: "nul_byte" }],
    ["C05-5 newline", () => "notes\nfake-log-line.txt", { error: "path_invalid", reason: "control_char" }],
    ["C05-5 ANSI escape", () => "notes\u001b[2J.txt", { error: "path_invalid", reason: "control_char" }],
    ["C05-6 tilde", () => "~/secret.txt", { relative: "~/secret.txt", kind: "missing", missingDepth: 2 }],
    ["C05-6 $HOME", () => "$HOME/.bashrc", { relative: "$HOME/.bashrc", kind: "missing", missingDepth: 2 }],
    ["C05-7 fullwidth dots and slash", () => "\uff0e\uff0e\uff0fproj-out\uff0fsecret.txt", { relative: "\uff0e\uff0e\uff0fproj-out\uff0fsecret.txt", kind: "missing", missingDepth: 1 }],
    ["C05-8 drive", () => "C:\\Windows\\win.ini", { error: "path_invalid", reason: "windows_drive_or_unc" }],
    ["C05-8 UNC", () => "\\\\server\\share\\x.txt", { error: "path_invalid", reason: "windows_drive_or_unc" }],
    ["C05-9 empty", () => "", { error: "path_invalid", reason: "empty" }],
    ["C05-9 dot is the root", () => ".", { relative: "", kind: "directory" }],
    ["C05-11 ./././notes.txt", () => "./././notes.txt", { relative: "notes.txt", kind: "file" }],
    ["double slashes inside", () => "sub//inner.txt", { relative: "sub/inner.txt", kind: "file" }],
    ["trailing slash on a dir", () => "sub/", { relative: "sub", kind: "directory" }],
  ];

  it.each(cases)("%s", async (_name, rawOf, expected) => {
    const raw = rawOf(f);
    if ("error" in expected) {
      const err = await failure(() => resolveInWorkspace(ws, raw));
      expect(err.errorName).toBe(expected.error);
      expect(err.detail.reason).toBe(expected.reason);
      expect(err.detail.path_raw).toBe(raw);
      if (expected.error === "path_outside_workspace") {
        expect(isInside(f.ws, err.detail.path_resolved as string)).toBe(false);
      }
      return;
    }
    const fenced = await resolveInWorkspace(ws, raw);
    expect(fenced.raw).toBe(raw);
    expect(fenced.relative).toBe(expected.relative);
    expect(fenced.absolute).toBe(expected.relative ? path.join(f.ws, expected.relative) : f.ws);
    expect(fenced.kind).toBe(expected.kind);
    expect(fenced.exists).toBe(expected.kind !== "missing");
    if (expected.viaSymlink !== undefined) expect(fenced.viaSymlink).toBe(expected.viaSymlink);
    expect(fenced.missingDepth).toBe(expected.missingDepth ?? 0);
  });

  it("C01-6: the same refusals with the root configured with a trailing slash", async () => {
    const slashed = workspaceAt(`${f.ws}/`, await canonicalRoot(`${f.ws}/`));
    for (const raw of ["../proj-out/secret.txt", path.join(f.root, "proj-out/secret.txt"), path.join(f.root, "projX/new.txt"), "../proj_evil/sub/new.txt"]) {
      const err = await failure(() => resolveInWorkspace(slashed, raw));
      expect(err.detail).toMatchObject({ reason: "lexical", path_raw: raw });
    }
    expect((await resolveInWorkspace(slashed, path.join(f.ws, "notes.txt"))).relative).toBe("notes.txt");
  });

  it("C01: path_resolved shows the outside target", async () => {
    const err = await failure(() => resolveInWorkspace(ws, "../proj-out/secret.txt"));
    expect(err.detail.path_resolved).toBe(path.join(f.root, "proj-out/secret.txt"));
  });

  it("C02-1: path_resolved shows the link's outside target", async () => {
    const err = await failure(() => resolveInWorkspace(ws, "leak.txt"));
    expect(err.detail.path_resolved).toBe(path.join(f.root, "proj-out/secret.txt"));
  });

  it("C03-4 / C13-4: a root behind a symlink works and links resolve to their targets", async () => {
    const link = path.join(f.root, "proj-link");
    await fs.symlink("proj", link);
    const linked = workspaceAt(link, await canonicalRoot(link));
    expect(linked.root).toBe(f.ws);
    const created = await resolveInWorkspace(linked, "new/deep/file.txt");
    expect(created).toMatchObject({ relative: "new/deep/file.txt", absolute: path.join(f.ws, "new/deep/file.txt"), missingDepth: 3 });
    expect((await resolveInWorkspace(linked, path.join(link, "notes.txt"))).absolute).toBe(f.ws + "/notes.txt");
    expect((await resolveInWorkspace(linked, path.join(f.ws, "notes.txt"))).relative).toBe("notes.txt");
    const escaped = await failure(() => resolveInWorkspace(linked, path.join(link, "../proj-out/secret.txt")));
    expect(escaped.detail.reason).toBe("lexical");

    await f.put("releases/v2.txt", "v2\n");
    await fs.symlink("releases/v2.txt", f.at("current.txt"));
    expect(await resolveInWorkspace(linked, "current.txt")).toMatchObject({ relative: "releases/v2.txt", kind: "file", viaSymlink: true });
  });

  it("creates nothing while resolving", async () => {
    await failure(() => resolveInWorkspace(ws, "ext/a/b/new.txt"));
    await resolveInWorkspace(ws, "new/deep/file.txt");
    await expect(fs.stat(path.join(f.root, "proj-out/a"))).rejects.toThrow();
    await expect(fs.stat(f.at("new"))).rejects.toThrow();
  });

  it("classifies a FIFO as other", async () => {
    execFileSync("mkfifo", [f.at("pipe")]);
    expect((await resolveInWorkspace(ws, "pipe")).kind).toBe("other");
  });
});

describe("canonicalRoot", () => {
  let f: Fixture;
  beforeEach(async () => {
    f = await makeFixture();
  });
  afterEach(() => f.cleanup());

  it("returns the realpath of a root behind a symlink", async () => {
    await fs.symlink("proj", path.join(f.root, "proj-link"));
    expect(await canonicalRoot(path.join(f.root, "proj-link"))).toBe(f.ws);
  });

  it("refuses a missing root and a file", async () => {
    expect((await failure(() => canonicalRoot(path.join(f.root, "nope")))).errorName).toBe("not_found");
    expect((await failure(() => canonicalRoot(path.join(f.root, "notes.txt")))).detail.reason).toBe("not_a_directory");
  });
});

describe("openForRead", () => {
  let f: Fixture;
  let ws: Workspace;
  beforeEach(async () => {
    f = await makeFixture();
    ws = workspaceAt(f.ws, f.ws);
  });
  afterEach(() => f.cleanup());

  it("opens the fenced file", async () => {
    const handle = await openForRead(ws, await resolveInWorkspace(ws, "notes.txt"));
    try {
      expect((await handle.readFile()).toString()).toBe("inside notes\n");
    } finally {
      await handle.close();
    }
  });

  it("refuses a final component swapped for an outside symlink after the check", async () => {
    const fenced = await resolveInWorkspace(ws, "notes.txt");
    await fs.rm(f.at("notes.txt"));
    await fs.symlink(path.join(f.root, "proj-out/secret.txt"), f.at("notes.txt"));
    const err = await failure(() => openForRead(ws, fenced));
    expect(err.errorName).toBe("path_outside_workspace");
    expect(err.detail).toMatchObject({ reason: "symlink", race: true });
  });

  it("refuses a parent directory swapped for an outside symlink after the check", async () => {
    await f.put("sub/secret.txt", "mine\n");
    const fenced = await resolveInWorkspace(ws, "sub/secret.txt");
    await fs.rename(f.at("sub"), f.at("sub-old"));
    await fs.symlink(path.join(f.root, "proj-out"), f.at("sub"));
    const err = await failure(() => openForRead(ws, fenced));
    expect(err.errorName).toBe("path_outside_workspace");
    expect(err.detail.race).toBe(true);
  });

  it("accepts a regular file re-created at the fenced path", async () => {
    const fenced = await resolveInWorkspace(ws, "notes.txt");
    await fs.rm(f.at("notes.txt"));
    await fs.writeFile(f.at("notes.txt"), "replaced\n");
    // Same path, new inode: what was opened is still a file at the fenced path, so it is accepted.
    const handle = await openForRead(ws, fenced);
    await handle.close();
  });

  it.each([
    ["missing", "gone.txt", "not_found"],
    ["directory", ".", "is_directory"],
  ])("refuses a %s", async (_name, raw, name) => {
    const err = await failure(async () => openForRead(ws, await resolveInWorkspace(ws, raw)));
    expect(err.errorName).toBe(name);
  });

  it("refuses a FIFO without blocking", async () => {
    execFileSync("mkfifo", [f.at("pipe")]);
    const err = await failure(async () => openForRead(ws, await resolveInWorkspace(ws, "pipe")));
    expect(err.detail.reason).toBe("not_regular_file");
  });
});
