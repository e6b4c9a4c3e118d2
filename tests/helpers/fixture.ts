import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/**
 * The field-cases fixture (docs/field-cases.md, "Conventions"): a fresh temp dir
 * `root`; the workspace `ws = root/proj` holding notes.txt = "inside notes\n"; a prefix-sibling
 * `root/proj-out/secret.txt` = "TOP-SECRET\n"; and `root/notes.txt` = "OUTSIDE-NOTES\n".
 */
export interface Fixture {
  root: string;
  ws: string;
  /** Absolute path inside the workspace. */
  at(rel: string): string;
  /** Writes bytes or text at a workspace-relative path (parents created). */
  put(rel: string, data: string | Buffer, mode?: number): Promise<void>;
  cleanup(): Promise<void>;
}

export async function makeFixture(): Promise<Fixture> {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "ar-case-")));
  const ws = path.join(root, "proj");
  await fs.mkdir(ws);
  await fs.mkdir(path.join(root, "proj-out"));
  await fs.writeFile(path.join(ws, "notes.txt"), "inside notes\n");
  await fs.writeFile(path.join(root, "proj-out", "secret.txt"), "TOP-SECRET\n");
  await fs.writeFile(path.join(root, "notes.txt"), "OUTSIDE-NOTES\n");
  return {
    root,
    ws,
    at: (rel) => path.join(ws, rel),
    async put(rel, data, mode) {
      const p = path.join(ws, rel);
      await fs.mkdir(path.dirname(p), { recursive: true });
      await fs.writeFile(p, data);
      if (mode !== undefined) await fs.chmod(p, mode);
    },
    cleanup: () => fs.rm(root, { recursive: true, force: true }),
  };
}
