import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ToolError } from "@/lib/errors";
import { BeneathReader, WorkspaceChanged } from "@/lib/workspace/read-beneath";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";

/**
 * The gateway's own reads of the workspace (lib/workspace/read-beneath.ts): no symbolic link on
 * a path is followed, and a file is read only when its open descriptor is the file recorded.
 * Fixture: the workspace `proj` holds `.env` (a secret) and `r/f` ("plain\n"); `proj-out/secret.txt`
 * is a file outside it.
 */

let f: Fixture;
let reader: BeneathReader;
const SECRET = "WS-SECRET=1\n";
beforeEach(async () => {
  f = await makeFixture();
  await f.put(".env", SECRET);
  await f.put("r/f", "plain\n");
  await f.put("s/f", "OTHER-DIR\n");
  reader = new BeneathReader(f.ws);
});
afterEach(async () => {
  reader.close();
  await f.cleanup();
});

/** Replaces `rel` by a symbolic link to `target` (as a racing command's apply would). */
function swapForLink(rel: string, target: string): void {
  fs.rmSync(f.at(rel), { recursive: true, force: true });
  fs.symlinkSync(target, f.at(rel));
}

async function changed(p: Promise<unknown> | (() => unknown)): Promise<WorkspaceChanged> {
  const err = await (typeof p === "function" ? Promise.resolve().then(p) : p).then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof WorkspaceChanged)) throw new Error(`expected WorkspaceChanged, got ${String(err)}`);
  expect(err).toBeInstanceOf(ToolError);
  expect(err.errorName).toBe("conflict");
  expect(err.detail.reason).toBe("changed_during_call");
  return err;
}

describe("a file swapped for a link is never read through it", () => {
  // Every kind of target a racing command can give the link: relative and absolute, a workspace
  // secret, a file outside, a directory, a dangling name, a link to a link, `..` after a link.
  const targets: Array<[string, (f: Fixture) => string]> = [
    ["a workspace secret (relative)", () => "../.env"],
    ["a workspace secret (absolute)", (fx) => fx.at(".env")],
    ["a file outside the workspace", (fx) => path.join(fx.root, "proj-out", "secret.txt")],
    ["a file outside, through ..", () => "../../proj-out/secret.txt"],
    ["a directory", () => "../s"],
    ["a dangling name", () => "../nothing-here"],
    ["a link to a link to the secret", () => "../hop"],
    ["'..' after a link", () => "../up/../.env"],
  ];
  test.each(targets)("%s", async (_name, target) => {
    const st = fs.lstatSync(f.at("r/f"));
    fs.symlinkSync(".env", f.at("hop"));
    fs.symlinkSync("r", f.at("up"));
    swapForLink("r/f", target(f));
    // With the recorded identity (a change set's before-state) and without it: never the target's bytes.
    await changed(reader.readFile("r/f", { dev: st.dev, ino: st.ino, size: st.size }));
    await changed(reader.readFile("r/f"));
    await changed(reader.hash("r/f"));
    expect(reader.lstat("r/f")?.isSymbolicLink()).toBe(true);
  });

  test("a FIFO or a directory at the path is refused, not opened as the file", async () => {
    fs.rmSync(f.at("r/f"));
    fs.mkdirSync(f.at("r/f"));
    await changed(reader.readFile("r/f"));
    fs.rmdirSync(f.at("r/f"));
    // mkfifo without a child process: node has none, so a unix socket stands in for a special file.
    const net = await import("node:net");
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(f.at("r/f"), resolve));
    try {
      await changed(reader.readFile("r/f"));
    } finally {
      server.close();
    }
  });
});

describe("a directory on the path swapped for a link", () => {
  const parents: Array<[string, (f: Fixture) => string]> = [
    ["to a directory outside holding the same name", (fx) => {
      fs.mkdirSync(path.join(fx.root, "proj-out", "r"));
      fs.writeFileSync(path.join(fx.root, "proj-out", "r", "f"), "HOST-BYTES\n");
      return path.join(fx.root, "proj-out", "r");
    }],
    ["to another directory inside", () => "s"],
    ["to the workspace root itself", () => "."],
  ];
  test.each(parents)("%s", async (_name, target) => {
    const st = fs.lstatSync(f.at("r/f"));
    swapForLink("r", target(f));
    await changed(reader.readFile("r/f", { dev: st.dev, ino: st.ino, size: st.size }));
    await changed(reader.readFile("r/f"));
    await changed(() => reader.lstat("r/f"));
    await changed(() => reader.readdir("r"));
  });

  test("deeper: a link two levels up is refused as well", async () => {
    await f.put("a/b/c/d.txt", "deep\n");
    swapForLink("a/b", "../s");
    await changed(reader.readFile("a/b/c/d.txt"));
  });

  test("a directory swapped after the reader held it open keeps reading the directory it opened", async () => {
    // The handle is the directory that was there (inside the workspace), never what the new link names.
    expect((await reader.readFile("r/f"))?.toString()).toBe("plain\n");
    fs.renameSync(f.at("r"), f.at("r-old"));
    fs.symlinkSync("s", f.at("r"));
    expect((await reader.readFile("r/f"))?.toString()).toBe("plain\n");
    // A fresh reader walks again and meets the link.
    const fresh = new BeneathReader(f.ws);
    try {
      await changed(fresh.readFile("r/f"));
    } finally {
      fresh.close();
    }
  });
});

describe("the file recorded, and no other", () => {
  test("another regular file renamed over the path (same size) is refused by inode", async () => {
    const st = fs.lstatSync(f.at("r/f"));
    fs.writeFileSync(f.at("r/g"), "PLAIN\n");
    fs.renameSync(f.at("r/g"), f.at("r/f"));
    await changed(reader.readFile("r/f", { dev: st.dev, ino: st.ino, size: st.size }));
  });

  test("the same file grown since it was recorded is refused by size", async () => {
    const st = fs.lstatSync(f.at("r/f"));
    fs.appendFileSync(f.at("r/f"), "more\n");
    await changed(reader.readFile("r/f", { dev: st.dev, ino: st.ino, size: st.size }));
  });

  test("bytes that no longer hash to the expected sha256 are refused", async () => {
    await changed(reader.readFile("r/f", { sha256: "0".repeat(64) }));
  });

  test("the recorded file is read, hashed and listed as it is", async () => {
    const st = fs.lstatSync(f.at("r/f"));
    expect((await reader.readFile("r/f", { dev: st.dev, ino: st.ino, size: st.size }))?.toString()).toBe("plain\n");
    expect(await reader.hash("r/f")).toBe(crypto.createHash("sha256").update("plain\n").digest("hex"));
    expect(reader.readdir("r")?.map((b) => b.toString())).toEqual(["f"]);
    expect(await reader.readFile("r/missing")).toBeNull();
    expect(await reader.readFile("missing-dir/x")).toBeNull();
    expect(reader.lstat("r/f/under-a-file")).toBeNull();
  });

  test("paths with empty, '.' or '..' components are refused", async () => {
    for (const bad of ["../proj-out/secret.txt", "r/../.env", "./r/f", "r//f"]) {
      await expect(reader.readFile(bad)).rejects.toMatchObject({ errorName: "path_invalid" });
    }
  });
});

describe("chmod through a descriptor", () => {
  test("a file swapped for a link to a host file: the host file keeps its mode", async () => {
    const host = path.join(f.root, "proj-out", "secret.txt");
    fs.chmodSync(host, 0o600);
    const st = fs.lstatSync(f.at("r/f"));
    swapForLink("r/f", host);
    await changed(() => reader.chmod("r/f", 0o777, { dev: st.dev, ino: st.ino }));
    expect(fs.statSync(host).mode & 0o777).toBe(0o600);
  });

  test("a directory swapped for a link to a host directory: the host directory keeps its mode", async () => {
    const hostDir = path.join(f.root, "proj-out");
    fs.chmodSync(hostDir, 0o700);
    swapForLink("s", hostDir);
    await changed(() => reader.chmod("s", 0o777));
    expect(fs.statSync(hostDir).mode & 0o777).toBe(0o700);
  });

  test("the recorded file and directory get their mode", () => {
    const st = fs.lstatSync(f.at("r/f"));
    reader.chmod("r/f", 0o640, { dev: st.dev, ino: st.ino });
    reader.chmod("s", 0o750);
    expect(fs.statSync(f.at("r/f")).mode & 0o777).toBe(0o640);
    expect(fs.statSync(f.at("s")).mode & 0o777).toBe(0o750);
  });
});
