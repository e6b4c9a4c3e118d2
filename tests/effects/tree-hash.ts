import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * sha256 over a whole directory tree: every entry's relative path, type, permission bits and
 * content (file bytes, symlink target), in sorted order. Two trees hash equal only when they are
 * byte-identical, modes included.
 */
export function treeHash(root: string, skip: (rel: string) => boolean = () => false): string {
  const hash = crypto.createHash("sha256");
  const walk = (rel: string) => {
    const names = fs.readdirSync(path.join(root, rel)).sort();
    for (const name of names) {
      const p = rel ? `${rel}/${name}` : name;
      if (skip(p)) continue;
      const abs = path.join(root, p);
      const st = fs.lstatSync(abs);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) hash.update(`L ${p} ${fs.readlinkSync(abs)}\n`);
      else if (st.isDirectory()) {
        hash.update(`D ${p} ${mode}\n`);
        walk(p);
      } else hash.update(`F ${p} ${mode} ${crypto.createHash("sha256").update(fs.readFileSync(abs)).digest("hex")}\n`);
    }
  };
  walk("");
  return hash.digest("hex");
}
