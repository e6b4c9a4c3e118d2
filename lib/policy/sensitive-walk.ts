import fs from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import type { Walk } from "@/lib/policy/command-knowledge";
import { GLOB_OPTIONS, ruleGlobMatches } from "@/lib/policy/rule-match";
import type { PolicyRuleData } from "@/lib/policy/types";

/**
 * The disk walk behind a recursive read (`grep -r`, `cat dir/*`, `tar c .`): which files under a
 * directory a command would read that a path rule keeps sensitive. Bounded in entries and hits,
 * so a huge tree makes the line ask instead of making the policy slow.
 */

/** Entries a recursive-read check looks at before it gives up and asks. */
export const MAX_WALK_ENTRIES = 20_000;
/** Sensitive files named per recursive read (the first one found for each rule, this many rules). */
const MAX_WALK_HITS = 5;

/**
 * The files under `absolute` (workspace-relative `relative`) that `walk`'s reader would read and
 * a non-allow path rule covers (the first file per rule, at most MAX_WALK_HITS), or
 * "too_large". Symlinks met during the walk are not followed (readers that follow them ask
 * already); a starting point that is a file is checked itself.
 */
export async function sensitiveFilesUnder(
  absolute: string,
  relative: string,
  walk: Walk,
  rules: PolicyRuleData[],
  gitWalks = false,
): Promise<Array<{ file: string; rule: PolicyRuleData }> | "too_large"> {
  const hits: Array<{ file: string; rule: PolicyRuleData }> = [];
  const matcher = (globs: string[]) => (globs.length ? picomatch(globs, GLOB_OPTIONS) : null);
  const skipDir = matcher(walk.skipDirs);
  const exclude = matcher(walk.excludeFiles);
  const include = matcher(walk.includeFiles);
  const check = async (rel: string, abs: string): Promise<void> => {
    let covering = rules.filter((r) => r.pathGlob && !r.command && r.decision !== "allow" && ruleGlobMatches(r, rel));
    // In the box, .git is walked like any directory (hooks and config are read-only there); only
    // a git config holding a credential is still a secret. A deny rule is never passed over.
    if (gitWalks && covering.length > 0 && covering.every((r) => r.decision !== "deny") && isInsideGitDir(rel) && !(await gitConfigHoldsCredential(rel, abs))) {
      covering = covering.filter((r) => !GIT_DIR_RULES.has(r.id));
    }
    const rule = covering.find((r) => r.decision === "deny") ?? covering[0];
    if (rule && hits.length < MAX_WALK_HITS && !hits.some((h) => h.rule.id === rule.id)) hits.push({ file: rel, rule });
  };
  const st = await fs.lstat(absolute).catch(() => null);
  if (!st) return hits;
  if (!st.isDirectory()) {
    await check(relative, absolute);
    return hits;
  }
  let seen = 0;
  const queue: Array<[abs: string, rel: string]> = [[absolute, relative]];
  while (queue.length && hits.length < MAX_WALK_HITS) {
    const [dirAbs, dirRel] = queue.shift()!;
    const entries = await fs.readdir(dirAbs, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (++seen > MAX_WALK_ENTRIES) return "too_large";
      if (walk.skipHidden && e.name.startsWith(".")) continue;
      const rel = dirRel ? `${dirRel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!skipDir?.(e.name)) queue.push([path.join(dirAbs, e.name), rel]);
      } else if (!e.isSymbolicLink()) {
        if (exclude?.(e.name) || (include && !include(e.name))) continue;
        await check(rel, path.join(dirAbs, e.name));
      }
    }
  }
  return hits;
}

/** The default rules that make `.git` sensitive as a whole (not for its secrets, for its hooks and config). */
const GIT_DIR_RULES = new Set(["default:sensitive-git-dir", "default:sensitive-git-dir-nested"]);

/** True when a workspace-relative path lies inside a `.git` directory, or is a `.git` file (a `gitdir:` pointer). */
function isInsideGitDir(rel: string): boolean {
  return rel.split("/").includes(".git");
}

/**
 * Whether a file in a `.git` directory is a git config holding a credential: a URL with a
 * user name, password or token (`https://user:token@host`), an `extraHeader` (often `Authorization:`), or a
 * `[credential]` section. Other files there (objects, refs, hooks) are not secrets.
 */
async function gitConfigHoldsCredential(rel: string, abs: string): Promise<boolean> {
  const name = rel.slice(rel.lastIndexOf("/") + 1);
  if (name !== "config" && name !== "config.worktree" && name !== "credentials") return false;
  if (name === "credentials") return true;
  const text = await fs.readFile(abs, "utf8").catch(() => null);
  if (text === null) return true; // unreadable: judge it as a secret
  return /:\/\/[^\s/@]+@|extraheader|^\s*\[credential/im.test(text.slice(0, 256 * 1024));
}
