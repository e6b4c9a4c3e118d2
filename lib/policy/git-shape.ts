import fs from "node:fs";
import path from "node:path";

/**
 * Where git would find a repository inside the workspace by its shape on disk, whatever the
 * directory is called. git takes a directory for a repository (a bare one, or the target of a
 * `.git` file) when it holds a `HEAD` that is not a directory, and `objects` and `refs` there or
 * in the directory a `commondir` file names; a linked worktree's directory holds `HEAD` with
 * `commondir` and `gitdir`. The check here is wider than git's: `objects` and `refs` of any type
 * count (git only asks that it may enter them, which an executable file or a link also allows),
 * and `HEAD` with a `commondir` or `gitdir` file is enough, whatever they name.
 *
 * One check serves the policy (a write_file into such a directory asks, lib/policy/decide.ts) and
 * the change sets (lib/effects/git-danger.ts judges its config and hooks there as inside `.git`),
 * each through its own view of the workspace: as it is, or as a change set will leave it.
 */

/** What a workspace path is in a view: a file, a directory, a link, or null when absent. */
export type ShapeType = "file" | "dir" | "symlink" | null;

/** A view of the workspace: the type of a workspace-relative path ("" is the root). */
export type TypeOf = (rel: string) => ShapeType;

/**
 * Whether the workspace directory `dirRel` ("" for the root) has the shape of a git directory in
 * `typeOf`: a `HEAD` that is not a directory, and `objects` and `refs` (any type), or a
 * `commondir` or `gitdir` file beside it.
 */
export function hasGitDirShape(dirRel: string, typeOf: TypeOf): boolean {
  const at = (name: string) => typeOf(dirRel === "" ? name : `${dirRel}/${name}`);
  const head = at("HEAD");
  if (head === null || head === "dir") return false;
  if (at("objects") !== null && at("refs") !== null) return true;
  return at("commondir") !== null || at("gitdir") !== null;
}

/**
 * The workspace-relative directories among the ancestors of `rel` (its own directory first, the
 * root "" last) that have the shape of a git directory in `typeOf`. `memo` caches the answer per
 * directory across calls with the same view.
 */
export function gitDirsAbove(rel: string, typeOf: TypeOf, memo?: Map<string, boolean>): string[] {
  const parts = rel.split("/").filter(Boolean);
  const out: string[] = [];
  for (let n = parts.length - 1; n >= 0; n--) {
    const dirRel = parts.slice(0, n).join("/");
    let shaped = memo?.get(dirRel);
    if (shaped === undefined) {
      shaped = hasGitDirShape(dirRel, typeOf);
      memo?.set(dirRel, shaped);
    }
    if (shaped) out.push(dirRel);
  }
  return out;
}

/**
 * The workspace as it is on disk (`lstat`, links not followed), one synchronous name-cache lookup
 * per path, remembered for the life of the view. A path whose parent is not a directory is absent.
 * @param root canonical workspace root
 */
export function diskView(root: string): TypeOf {
  const seen = new Map<string, ShapeType>();
  return (rel) => {
    const hit = seen.get(rel);
    if (hit !== undefined) return hit;
    let t: ShapeType = null;
    try {
      const st = fs.lstatSync(/*turbopackIgnore: true*/ path.join(root, rel));
      t = st.isDirectory() ? "dir" : st.isSymbolicLink() ? "symlink" : "file";
    } catch {
      t = null;
    }
    seen.set(rel, t);
    return t;
  };
}

/**
 * `base` with some paths changed: `changed` maps a path to its type afterwards (null: deleted).
 * The ancestors of a path that exists afterwards are directories; a path below one that is
 * deleted or no longer a directory is absent.
 */
export function overlayView(base: TypeOf, changed: ReadonlyMap<string, ShapeType>): TypeOf {
  const dirs = new Set<string>();
  for (const [p, t] of changed) {
    if (t === null) continue;
    const parts = p.split("/");
    for (let n = 1; n < parts.length; n++) dirs.add(parts.slice(0, n).join("/"));
  }
  return (rel) => {
    if (changed.has(rel)) return changed.get(rel)!;
    if (dirs.has(rel)) return "dir";
    const parts = rel.split("/");
    for (let n = parts.length - 1; n >= 1; n--) {
      const up = parts.slice(0, n).join("/");
      if (changed.has(up)) return changed.get(up) === "dir" ? base(rel) : null;
    }
    return base(rel);
  };
}
