import fs from "node:fs/promises";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import picomatch from "picomatch";
import { capDiff, diffFileBytes, diffTexts } from "@/lib/diff/unified";
import { inPool, type ContentSource } from "@/lib/effects/apply";
import { DELETION_WINDOW_MS, type PriorDeletions } from "@/lib/effects/deletion-budget";
import { completedShapeDangers, configIsInert, gitDanger } from "@/lib/effects/git-danger";
import { afterView as linkAfterView, LINK_SCAN_MAX_ENTRIES, linkNamesWorkspaceFile, linkViews, probeChildren, scanLinks, type WorkspaceLink } from "@/lib/effects/link-check";
import { reviewGitState } from "@/lib/effects/git-state";
import type { FileChangeRow } from "@/lib/effects/journal";
import type { ChangeEntry, ChangeKind } from "@/lib/effects/read-change-set";
import { SENSITIVE_PATHS } from "@/lib/policy/default-rules";
import { gitConfigPaths } from "@/lib/policy/git-config-paths";
import { diskView, gitDirsAbove, overlayView } from "@/lib/policy/git-shape";
import { GLOB_OPTIONS, GLOB_OPTIONS_NOCASE } from "@/lib/policy/rule-match";
import { RUNS_LATER_GLOBS, RUNS_LATER_PATHS } from "@/lib/policy/presets";
import type { BackupStore } from "@/lib/tools/define-tool";
import { BeneathReader, WorkspaceChanged, type ExpectedFile } from "@/lib/workspace/read-beneath";
import { decodeForDisplay, profileText, sha256Hex } from "@/lib/workspace/text";

/**
 * Turns a change set into journal rows, backups, a combined unified diff and the `changes`
 * summary a call's result and record carry; and decides whether it must be held for a reviewer.
 *
 * Every replaced or deleted file's bytes go to the backup store here, before anything in the
 * workspace changes. They are read without following a symbolic link anywhere on the path, from a
 * descriptor checked to be the very file the change set recorded (lib/workspace/read-beneath.ts):
 * a file swapped since (for a link to a secret, say) stops the staging with `conflict`
 * ("changed_during_call"), and the backups already made for the change set are removed again, so
 * a backup only ever holds bytes the named file had.
 *
 * Bulky generated trees (ignored by the workspace's .gitignore, or a node_modules / cache
 * directory) keep no backups and no per-file diff: they are counted and summarised, and their new
 * content is applied all the same.
 */

/** One changed path as the result lists it. */
export interface ChangedFile {
  path: string;
  kind: ChangeKind;
  /** Bytes of the new content (files). */
  size?: number;
  /** Permission bits after the change, octal ("0755"). */
  mode?: string;
  /** Symlink target after the change. */
  link?: string;
  additions?: number;
  deletions?: number;
  /** A generated file applied without a backup. */
  bulky?: boolean;
}

/** The `changes` member of a call's result and record. */
export interface ChangesSummary {
  /** applied: in the workspace; held: waits for a reviewer (wait with get_call); discarded: never applied. */
  status: "applied" | "held" | "discarded";
  created: number;
  modified: number;
  deleted: number;
  /** Bytes of new file content the change set writes. */
  bytes: number;
  /** Changed paths (directories included) in total; `files` holds at most FILES_CAP of them. */
  total_files: number;
  files: ChangedFile[];
  files_truncated: boolean;
  /**
   * Existing files whose content the change set destroys (deleted, replaced by a link or a
   * directory, emptied, or cut to less than half of their lines), generated files aside: counted
   * against the large-deletion threshold and the agent's budget (lib/effects/deletion-budget.ts).
   */
  destroyed?: number;
  /** Generated files applied without backups (counts and bytes), by top directory. */
  bulky?: { files: number; bytes: number; dirs: string[] };
  /** Paths not applied (special files). */
  skipped?: Array<{ path: string; reason: string }>;
  /** Why the change set is held (or was held) for a reviewer. */
  hold_reasons?: string[];
  /** The call to wait on (get_call) while held. */
  call_id?: string;
  /** What the change set does to git's index and refs, in words (lib/effects/git-state.ts); absent when nothing. */
  git?: string[];
  /** A restart finished ("rolled_forward") or undid ("rolled_back") an interrupted apply. */
  recovery?: "rolled_forward" | "rolled_back";
}

/** Most paths listed in `changes.files`. */
export const FILES_CAP = 200;
/** Longest combined diff kept with a change set (characters). */
const STORED_DIFF_MAX_CHARS = 1_000_000;
/** Files larger than this get no line diff (a note instead). */
const DIFF_FILE_MAX_BYTES = 2 * 1024 * 1024;

/** Directory names whose contents are generated (applied without backups). */
const BULKY_DIRS = new Set(["node_modules", ".next", "__pycache__", ".venv", ".pytest_cache", ".mypy_cache", ".turbo", ".gradle", ".tox"]);

/**
 * What holds a change set for a reviewer by its paths: the sensitive paths of the policy (less the
 * blanket `.git/**` entries: inside `.git`, only the files that name code or config to run are
 * held, and lib/effects/git-danger.ts decides and names that danger; the objects, refs, index and
 * logs a `git add` or `git commit` writes are the repository's ordinary work and apply at once,
 * backed up like any change), and the files that run later with the person's rights or change how
 * things run (lib/policy/presets.ts RUNS_LATER_PATHS, the same list the presets ask about for
 * write_file and edit_file).
 */
const HOLD_SENSITIVE = SENSITIVE_PATHS.filter(([id]) => id !== "git-dir" && id !== "git-dir-nested").map(([, glob]) => glob);

// Secrets match ignoring letter case, as the policy's ask rules do (lib/policy/rule-match.ts ruleGlobMatches).
const sensitiveMatcher = picomatch(HOLD_SENSITIVE, GLOB_OPTIONS_NOCASE);
// Loaded caches are judged on their own (`isLoadedCache`): held when written, not when removed.
const runsLaterMatcher = picomatch(RUNS_LATER_PATHS.filter(([id]) => id !== "loaded-caches").map(([, glob]) => glob), GLOB_OPTIONS);
const installedProgramsMatcher = picomatch(RUNS_LATER_PATHS.filter(([id]) => id === "installed-programs").map(([, glob]) => glob), GLOB_OPTIONS);

/** Whether a path is under a generated directory (node_modules, caches, virtual environments). */
function inBulkyDir(rel: string): boolean {
  return rel.split("/").some((p) => BULKY_DIRS.has(p));
}

/**
 * Compiled code an interpreter loads INSTEAD OF the source beside it, when a header or key it can
 * forge matches: Python's bytecode (`__pycache__/<mod>.<tag>.pyc` is run in place of `<mod>.py`
 * whenever its recorded source mtime and size match, and a lone `mod.pyc` is imported as `mod`),
 * and bootsnap's compile and load-path caches (Ruby code and `require` resolution served from the
 * cache while the source's mtime matches). A reviewer sees the clean source; the cache runs. These
 * are never "generated output" to apply unseen: a change set that creates or changes one is held.
 * The globs are the runs-later family "loaded-caches" (lib/policy/presets.ts), so write_file and
 * edit_file ask before writing one under balanced and autonomous, as for any file that runs later.
 * In the box Python writes no bytecode into the workspace (lib/exec/sandbox.ts `BOX_ENV`), so an
 * ordinary `python3 -c 'import mod'` never trips this; only a deliberate write does.
 */
export const LOADED_CACHE_GLOBS: readonly string[] = RUNS_LATER_PATHS.filter(([id]) => id === "loaded-caches").map(([, glob]) => glob);
const loadedCacheMatcher = picomatch([...LOADED_CACHE_GLOBS], GLOB_OPTIONS);

/**
 * Whether `rel` is a loaded-instead-of-source cache (LOADED_CACHE_GLOBS) beside sources a reviewer
 * sees: inside another generated tree (`.venv`, `node_modules`, `.tox`), whose sources are applied
 * unseen anyway, bytecode is as generated as they are.
 */
export function isLoadedCache(rel: string): boolean {
  if (!loadedCacheMatcher(rel)) return false;
  return !rel.split("/").some((p) => p !== "__pycache__" && BULKY_DIRS.has(p));
}

/**
 * Whether a change to `rel` holds its change set by its path: a secret, or a file that runs later.
 * Generated directories hold package.json and config files of their own that nothing here runs;
 * installed programs and interpreter start-up hooks in them (`node_modules/.bin`, `.pth`) do run.
 * (Loaded caches hold only when written, not when deleted: see `stageWith`.)
 */
function holdsByPath(rel: string): boolean {
  return sensitiveMatcher(rel) || (runsLaterMatcher(rel) && (!inBulkyDir(rel) || installedProgramsMatcher(rel)));
}

/**
 * Child paths whose risk can come from the name of a directory above them, derived from the
 * secret and runs-later globs themselves (lib/effects/link-check.ts `probeChildren`: `.bin/x`,
 * `wrapper/x`, `releases/x`, `fish/x`, `workflows/x`, `lib/x/site-packages/x.pth`, …).
 */
const PROBE_CHILDREN = probeChildren([...HOLD_SENSITIVE, ...RUNS_LATER_GLOBS]);

/**
 * Whether a link at `rel` to a directory would give risky names to whatever it points at: `rel`
 * itself holds (`holds`, default `holdsByPath`), or a probe child holds below `rel` and not below
 * a plain name beside it.
 */
export function linkNameHoldsTree(rel: string, holds: (rel: string) => boolean = holdsByPath): boolean {
  const parent = path.posix.dirname(rel);
  const plain = parent === "." ? "agent-reach-plain-name" : `${parent}/agent-reach-plain-name`;
  return holds(rel) || PROBE_CHILDREN.some((child) => holds(`${rel}/${child}`) && !holds(`${plain}/${child}`));
}

/** Deletions above which a change set is held (AGENT_REACH_EFFECTS_MAX_DELETIONS, default 50). */
export function maxDeletions(): number {
  const n = Number(process.env.AGENT_REACH_EFFECTS_MAX_DELETIONS ?? 50);
  return Number.isFinite(n) && n >= 0 ? n : 50;
}

/**
 * Decides which paths are bulky generated files, applied without backups or diffs (counted only):
 * anything under a generated directory (BULKY_DIRS), and what the workspace's .gitignore ignores
 * when it did not exist before the command (`existed` false). The .gitignore is a file the agent
 * can write: it may spare the diff of new files, never the backup of bytes that were there, so a
 * file that existed is always backed up and revertible. Paths that hold a change set (secrets,
 * files that run later) are never bulky: the reviewer sees their diff.
 */
export async function bulkyMatcher(root: string | BeneathReader, holds: (rel: string) => boolean = holdsByPath): Promise<(rel: string, isDir: boolean, existed: boolean) => boolean> {
  let ig: Ignore | null = null;
  // Read like every workspace file the gateway reads for itself: a .gitignore that is a link is none.
  const reader = typeof root === "string" ? new BeneathReader(root) : root;
  try {
    const text = await reader.readFile(".gitignore");
    ig = text ? ignore().add(text.toString("utf8")) : null;
  } catch {
    ig = null;
  } finally {
    if (reader !== root) reader.close();
  }
  return (rel, isDir, existed) => {
    const parts = rel.split("/");
    if (parts[0] === ".git" || parts.includes(".git")) return false;
    if (holds(rel)) return false;
    if (parts.some((p) => BULKY_DIRS.has(p))) return true;
    if (!ig || existed) return false;
    try {
      return ig.ignores(isDir ? `${rel}/` : rel);
    } catch {
      return false;
    }
  };
}

/** What staging produced. */
export interface Staged {
  rows: FileChangeRow[];
  summary: ChangesSummary;
  /** Combined unified diff of the non-bulky text files (capped). */
  diff: string;
  diffTruncated: boolean;
  /** Reasons to hold it for a reviewer (empty: apply at once). */
  holdReasons: string[];
  /** Ids of the backups made of the before-bytes (to remove when the change set is not applied). */
  backupIds: string[];
}

/**
 * Journal rows for `entries`, with the before bytes of every replaced or deleted (non-bulky) file
 * saved as backups of the current call.
 *
 * @param root canonical workspace root (before-states are read there)
 * @param source where the after bytes are (the upper layer)
 */
export async function stageEntries(input: {
  root: string;
  entries: ChangeEntry[];
  skipped?: Array<{ path: string; reason: string }>;
  source: ContentSource;
  backups: BackupStore;
  reviewEffects?: boolean;
  /**
   * Hold a change set that deletes more than `maxDeletions()` files (default true; the preset's
   * `holdLargeDeletions` check decides for a command: lib/policy/presets.ts).
   */
  holdLargeDeletions?: boolean;
  /**
   * The files the same agent's commands deleted earlier without a reviewer (lib/effects/deletion-budget.ts),
   * asked only when this change set deletes files and is not held for its own count: together they
   * must stay within `maxDeletions()`.
   */
  priorDeletions?: () => Promise<PriorDeletions>;
  /**
   * The command's overlay upper layer: when the change set touches a `.git` directory, git's index
   * and refs are read before and after (lib/effects/git-state.ts), shown, and held where risky.
   */
  upper?: string;
  /**
   * The policy let the command run without asking as read-only (under `strict`): a change beyond
   * git's stat cache (an index rewrite with the same entries) holds the change set.
   */
  readOnlyCommand?: boolean;
  /**
   * The links the gateway applied earlier that are still links (lib/effects/applied-links.ts):
   * judged with the walk's, so a link inside `node_modules`, which the walk does not enter, is
   * judged again when a path it resolves through changes type.
   */
  appliedLinks?: () => Promise<WorkspaceLink[]>;
}): Promise<Staged> {
  const reader = new BeneathReader(input.root);
  const saved: string[] = [];
  try {
    return await stageWith(input, reader, saved);
  } catch (err) {
    // A change set that cannot be staged is not applied: the backups made for it go too.
    if (saved.length > 0) await input.backups.discard(saved);
    throw err;
  } finally {
    reader.close();
  }
}

/** What a before-state's bytes must be: the recorded file (device, inode, size), or the known sha256. */
function expectedOf(state: NonNullable<ChangeEntry["before"]>): ExpectedFile {
  return {
    ...(state.dev !== undefined && { dev: state.dev }),
    ...(state.ino !== undefined && { ino: state.ino }),
    ...(state.dev !== undefined && { size: state.size }),
    ...(state.sha256 && { sha256: state.sha256 }),
  };
}

async function stageWith(input: Parameters<typeof stageEntries>[0], reader: BeneathReader, saved: string[]): Promise<Staged> {
  // Paths the person's git configuration runs (its hooks directory, included config files, the
  // scripts its filters or fsmonitor name) run later like the listed ones.
  const gitNamed = await gitConfigPaths(input.root);
  const holds = (rel: string) => holdsByPath(rel) || gitNamed.why(rel) !== null;
  // A link's name is judged with the loaded caches too: `__pycache__` → a directory of the
  // command's choosing gives every file there the name the interpreter loads.
  const linkHolds = (rel: string) => holds(rel) || isLoadedCache(rel);
  const isBulky = await bulkyMatcher(reader, holds);
  const rows: FileChangeRow[] = [];
  const files: ChangedFile[] = [];
  const diffs: string[] = [];
  let diffChars = 0;
  const counts = { created: 0, modified: 0, deleted: 0, bytes: 0 };
  const bulky = { files: 0, bytes: 0, dirs: new Set<string>() };
  /** Files whose content the change set destroys, by how (see `destroyedHow`). */
  const destroyed = { deleted: [] as string[], link: [] as string[], emptied: [] as string[], halved: [] as string[] };
  const sensitive = new Set<string>();
  const changedPaths = new Set(input.entries.map((e) => e.path));
  const gitDangers: string[] = [];
  const gitNamedHits: string[] = [];
  const symlinks: string[] = [];
  const loadedCode: string[] = [];
  const afterTypes = new Map(input.entries.map((e) => [e.path, e.after?.type ?? null]));
  // The repository shape is judged on the workspace as the change set leaves it: a directory with
  // HEAD, objects and refs is a git directory there, whichever change set made each part.
  const beforeView = diskView(input.root);
  const afterView = overlayView(beforeView, afterTypes);
  const shapeMemo = new Map<string, boolean>();
  const view = linkAfterView(input.root, input.entries);
  // The workspace's links, found while the entries are loaded (the walk never follows a link).
  const scanned = scanLinks(input.root);
  // The file-system and backup work of each entry runs in parallel; the summary is assembled in order.
  const loaded: Array<{ row: FileChangeRow; diff: { diff: string; additions: number; deletions: number } | null; destroys: keyof typeof destroyed | null }> = new Array(input.entries.length);
  await inPool(input.entries, async (e, seq) => {
    const isDir = (e.after ?? e.before)?.type === "dir";
    // Compiled code written where an interpreter loads it instead of the source is never bulky:
    // backed up, listed and held. Removing it (the interpreter recompiles) stays generated work.
    const bulk = !writesLoadedCache(e) && isBulky(e.path, isDir, Boolean(e.before));
    const row: FileChangeRow = {
      seq,
      path: e.path,
      kind: e.kind,
      beforeType: e.before?.type ?? null,
      beforeSha: null,
      beforeMode: e.before?.mode ?? null,
      beforeLink: e.before?.link ?? null,
      afterType: e.after?.type ?? null,
      afterSha: null,
      afterMode: e.after?.mode ?? null,
      afterLink: e.after?.link ?? null,
      size: e.after?.size ?? 0,
      bulky: bulk,
    };
    let before: Buffer | null = null;
    let after: Buffer | null = null;
    if (!bulk && e.before?.type === "file") {
      before = await reader.readFile(e.path, expectedOf(e.before));
      if (!before) throw new WorkspaceChanged(e.path, "it is gone");
      const backup = await input.backups.save({ path: e.path, bytes: before, mode: e.before.mode });
      saved.push(backup.id);
      row.beforeSha = backup.sha256;
    }
    if (!bulk && e.after?.type === "file") {
      after = await input.source.bytes(row);
      row.afterSha = sha256Hex(after);
      row.size = after.length;
    }
    const base = path.posix.basename(e.path);
    const pointerText = after && after.length <= 4096 && (base === "commondir" || base === ".git" || base.endsWith("alternates")) ? after.toString("utf8") : null;
    let danger = e.after && e.after.type !== "dir" ? gitDanger(e.path, pointerText, gitDirsAbove(e.path, afterView, shapeMemo)) : null;
    // A configuration that sets only inert keys (a fresh `git init`'s) runs nothing: not held for it.
    if (danger && after && (base === "config" || base === "config.worktree") && (await configIsInert(after))) danger = null;
    if (danger) gitDangers[seq] = danger;
    loaded[seq] = { row, diff: !bulk && (before || after) ? fileDiff(e.path, before, after, e) : null, destroys: bulk ? null : destroyedHow(e, before, after) };
  });
  for (const [seq, e] of input.entries.entries()) {
    const { row, diff: d, destroys } = loaded[seq];
    const bulk = row.bulky;
    const isDir = (e.after ?? e.before)?.type === "dir";
    rows.push(row);

    if (e.kind === "created" || (e.kind === "symlink" && !e.before)) counts.created++;
    else if (e.kind === "deleted") counts.deleted++;
    else if (e.kind === "modified" || e.kind === "mode" || e.kind === "symlink") counts.modified++;
    if (e.after?.type === "file" && e.kind !== "mode") counts.bytes += row.size;
    if (destroys) destroyed[destroys].push(e.path);
    // Generated directories (node_modules, caches) hold package.json files of their own that
    // nothing here runs; a .gitignore'd .envrc or Makefile still runs later, so it still holds.
    const gitWhy = gitNamed.why(e.path);
    if (gitWhy) gitNamedHits.push(gitWhy);
    else if (holdsByPath(e.path)) sensitive.add(e.path);
    else if (writesLoadedCache(e)) loadedCode.push(e.path);
    // A link gives its name to what it points at: a command that creates or retargets one is held,
    // so a person sees where it points, unless it names a file inside the workspace through plain
    // directories, resolved as the kernel resolves it (lib/effects/link-check.ts). That holds in
    // the generated directories too (`node_modules` → a directory of the agent's programs makes
    // them `node_modules/.bin`). A link whose name stands for a directory of files that run later
    // (`.claude`, `node_modules/.bin`, `.github`) is held whatever it points at: a file it points
    // at can be replaced by a directory later, by a change to the target only.
    if (
      e.after?.type === "symlink" &&
      e.after.link !== e.before?.link &&
      (linkNameHoldsTree(e.path, linkHolds) || !(await linkNamesWorkspaceFile(view, e.path, e.after.link)) || linkTargetHolds(e.path, e.after.link, linkHolds))
    ) {
      symlinks.push(`${e.path} → ${e.after.link ?? "?"}`);
    }

    if (bulk) {
      if (!isDir) {
        bulky.files++;
        bulky.bytes += e.after?.type === "file" ? row.size : 0;
      }
      bulky.dirs.add(bulkyRoot(e.path));
      continue;
    }
    const listed: ChangedFile = {
      path: e.path,
      kind: e.kind,
      ...(e.after?.type === "file" && { size: row.size }),
      ...(e.after && e.after.type !== "symlink" && { mode: e.after.mode.toString(8).padStart(4, "0") }),
      ...(e.after?.link !== undefined && { link: e.after.link }),
    };
    if (d) {
      listed.additions = d.additions;
      listed.deletions = d.deletions;
      if (d.diff && diffChars < STORED_DIFF_MAX_CHARS) {
        diffs.push(d.diff);
        diffChars += d.diff.length;
      }
    } else if (e.kind === "symlink" || (e.kind === "deleted" && e.before?.type === "symlink")) {
      const sd = diffTexts(e.before ? `a/${e.path}` : "/dev/null", e.after ? `b/${e.path}` : "/dev/null", e.before?.link ? `${e.before.link}\n` : "", e.after?.link ? `${e.after.link}\n` : "");
      if (sd.diff) diffs.push(`# symlink ${e.path}\n${sd.diff}`);
    }
    if (e.kind === "mode" && e.before && e.after) diffs.push(`diff --git a/${e.path} b/${e.path}\nold mode ${octal(e.before.mode)}\nnew mode ${octal(e.after.mode)}\n`);
    if (files.length < FILES_CAP) files.push(listed);
  }
  const linked = await judgeLinks(view, withLinks(await scanned, input.appliedLinks ? await input.appliedLinks() : []), linkHolds, (rel) => gitDirsAbove(rel, afterView, shapeMemo));
  const holdReasons: string[] = [];
  if (input.reviewEffects) holdReasons.push("a policy rule asks a reviewer to approve this command's effect (review_effects)");
  const destroyedCount = destroyed.deleted.length + destroyed.link.length + destroyed.emptied.length + destroyed.halved.length;
  if (input.holdLargeDeletions !== false && destroyedCount > maxDeletions()) holdReasons.push(`${describeDestroyed(destroyed)} (more than ${maxDeletions()})`);
  else if (input.holdLargeDeletions !== false && destroyedCount > 0 && input.priorDeletions) {
    const prior = await input.priorDeletions();
    if (destroyedCount + prior.count > maxDeletions()) {
      const deletedBefore = prior.count - (prior.emptied ?? 0);
      const before = [deletedBefore > 0 && `deleted ${deletedBefore} more`, prior.emptied && `destroyed the content of ${prior.emptied} more`].filter(Boolean).join(" and ");
      holdReasons.push(
        `${describeDestroyed(destroyed)}, and this agent's commands ${before} in the last ${DELETION_WINDOW_MS / 60_000} minutes without a reviewer (${prior.calls.join(", ")}${prior.calls.length < 5 ? "" : ", …"}): more than ${maxDeletions()} together`,
      );
    }
  }
  // A change set that gives a directory the shape of a repository (HEAD, objects, refs, commondir,
  // gitdir) makes git read the config and hooks an earlier change set left there as plain files.
  const shapeParts = new Set(["HEAD", "objects", "refs", "commondir", "gitdir"]);
  const completing = input.entries.filter((e) => e.after && shapeParts.has(path.posix.basename(e.path))).map((e) => path.posix.dirname(e.path).replace(/^\.$/, ""));
  const named = gitDangers.filter((d) => d !== undefined);
  named.push(...(await completedShapeDangers(input.root, completing, beforeView, afterView, changedPaths)));
  for (const d of named.slice(0, 5)) holdReasons.push(d);
  if (named.length > 5) holdReasons.push(`and ${named.length - 5} more git files that can run code`);
  for (const why of gitNamedHits.slice(0, 5)) holdReasons.push(`changes ${why}`);
  if (gitNamedHits.length > 5) holdReasons.push(`and ${gitNamedHits.length - 5} more paths the repository's git configuration runs`);
  if (sensitive.size > 0) holdReasons.push(`changes ${[...sensitive].slice(0, 5).join(", ")}${sensitive.size > 5 ? ` and ${sensitive.size - 5} more` : ""} (sensitive, or runs later with your rights)`);
  if (loadedCode.length > 0) {
    holdReasons.push(`writes ${loadedCode.slice(0, 5).join(", ")}${loadedCode.length > 5 ? ` and ${loadedCode.length - 5} more` : ""} (compiled code an interpreter loads instead of the reviewed source: Python bytecode, bootsnap caches)`);
  }
  if (symlinks.length > 0) holdReasons.push(`links ${symlinks.slice(0, 5).join(", ")}${symlinks.length > 5 ? ` and ${symlinks.length - 5} more` : ""} (a link can give a risky name to what it points at)`);
  const opened = worldWritable(input.entries);
  if (opened.length > 0) {
    holdReasons.push(
      `makes ${opened.slice(0, 5).map((e) => `${e.path || "."} (${octal4(e.after!.mode)})`).join(", ")}${opened.length > 5 ? ` and ${opened.length - 5} more` : ""} writable by other users of this machine (another local user could then change what you run, .git/config included)`,
    );
  }
  holdReasons.push(...linked);
  // Git's own state: only read when a path inside a .git directory changed (no git run otherwise).
  const git = input.upper ? await reviewGitState({ root: input.root, upper: input.upper, entries: input.entries, holdsByPath: holds }) : null;
  if (git) {
    holdReasons.push(...git.holdReasons);
    if (git.diff) diffs.push(git.diff);
  }
  if (input.readOnlyCommand) {
    const changed = input.entries.filter((e) => !git?.statOnly.has(e.path) && !(e.kind !== "dir_created" && e.kind !== "dir_deleted" && (e.after ?? e.before)?.type === "dir"));
    if (changed.length > 0) {
      holdReasons.push(`was allowed as a read-only command, yet changed files: ${changed.slice(0, 5).map((e) => e.path).join(", ")}${changed.length > 5 ? ` and ${changed.length - 5} more` : ""} (a read-only command changes nothing but git's stat cache)`);
    }
  }
  const capped = capDiff(diffs.join(""), STORED_DIFF_MAX_CHARS);
  const summary: ChangesSummary = {
    status: "applied",
    ...counts,
    total_files: input.entries.length,
    files,
    files_truncated: input.entries.length - bulkyCount(rows) > files.length,
    ...(destroyedCount > 0 && { destroyed: destroyedCount }),
    ...(bulky.files > 0 && { bulky: { files: bulky.files, bytes: bulky.bytes, dirs: [...bulky.dirs].slice(0, 20) } }),
    ...(input.skipped && input.skipped.length > 0 && { skipped: input.skipped.slice(0, 50) }),
    ...(holdReasons.length > 0 && { hold_reasons: holdReasons }),
    ...(git && git.lines.length > 0 && { git: git.lines }),
  };
  return { rows, summary, diff: capped.diff, diffTruncated: capped.truncated, holdReasons, backupIds: [...saved] };
}

/**
 * Why the workspace's links hold a change set (empty: they do not): a changed path that holds
 * under a name a link gives it (`nm/.bin/vitest` is `node_modules/.bin/vitest` while
 * `node_modules` → `nm`), a path a link resolves through that becomes a directory or a link (the
 * link's name then stands for a tree of the command's choosing), or a workspace too large to
 * look for links in.
 */
async function judgeLinks(
  view: ReturnType<typeof linkAfterView>,
  scanned: Awaited<ReturnType<typeof scanLinks>>,
  holds: (rel: string) => boolean,
  gitDirs: (rel: string) => ReturnType<typeof gitDirsAbove>,
): Promise<string[]> {
  const reasons: string[] = [];
  if (!scanned.complete) reasons.push(`the workspace holds more than ${LINK_SCAN_MAX_ENTRIES} entries: links that could give changed paths other names were not all checked`);
  const { aliases, retyped, incomplete } = await linkViews(view, scanned.links);
  if (incomplete) reasons.push("links give the changed paths too many other names to judge them all");
  const named = aliases.filter((a) => {
    const e = view.entries.get(a.path);
    if (holds(a.alias) && !holds(a.path)) return true;
    return e?.after && e.after.type !== "dir" && gitDanger(a.alias, null, gitDirs(a.alias)) !== null && gitDanger(a.path, null, gitDirs(a.path)) === null;
  });
  const list = <T>(xs: T[], show: (x: T) => string) => `${xs.slice(0, 5).map(show).join(", ")}${xs.length > 5 ? ` and ${xs.length - 5} more` : ""}`;
  if (named.length > 0) reasons.push(`changes ${list(named, (a) => `${a.alias} (${a.path} through the link ${a.link})`)} (sensitive, or runs later with your rights, under the name a link gives it)`);
  if (retyped.length > 0) {
    reasons.push(`makes ${list(retyped, (r) => `${r.path} a ${r.to === "dir" ? "directory" : "link"} (was ${r.from === "symlink" ? "a link" : r.from === "dir" ? "a directory" : "a file"}), which the link ${r.link} → ${r.target} resolves through`)} (the link's name then stands for what the command put there)`);
  }
  return reasons;
}

/**
 * How a change destroys an existing file's content, or null when it does not: "deleted" (any
 * deleted entry but a directory), "link" (a file replaced by a link; a file replaced by a
 * directory reads as deleted), "emptied" (non-empty, now 0 bytes), "halved" (a text file left with
 * fewer than half of its lines, a binary file with less than half of its bytes).
 * @param before the file's bytes before (null when not read: not a file, or bulky)
 * @param after the file's bytes after (null when not a file)
 */
export function destroyedHow(e: Pick<ChangeEntry, "kind" | "before" | "after">, before: Buffer | null, after: Buffer | null): "deleted" | "link" | "emptied" | "halved" | null {
  if (e.kind === "deleted") return "deleted";
  if (e.before?.type !== "file") return null;
  if (e.after?.type === "symlink") return "link";
  if (e.after?.type !== "file" || e.kind === "mode") return null;
  const was = before?.length ?? e.before.size;
  const now = after?.length ?? e.after.size;
  if (was > 0 && now === 0) return "emptied";
  if (!before || !after) return null;
  if (profileText(before).binary) return now * 2 < was ? "halved" : null;
  return lineCount(after) * 2 < lineCount(before) ? "halved" : null;
}

/** Lines of a text: newlines, plus one for a last line without its newline. */
function lineCount(bytes: Buffer): number {
  let n = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) n++;
  return bytes.length > 0 && bytes[bytes.length - 1] !== 10 ? n + 1 : n;
}

/**
 * The hold reason's words for destroyed content: "deletes 60 files" when every one was deleted,
 * else "destroys 120 files' content: 100 replaced by links, 20 emptied (big/a, big/b, …)".
 */
function describeDestroyed(d: Record<"deleted" | "link" | "emptied" | "halved", string[]>): string {
  const total = d.deleted.length + d.link.length + d.emptied.length + d.halved.length;
  if (total === d.deleted.length) return `deletes ${total} files`;
  const how: Array<[string[], string]> = [[d.deleted, "deleted"], [d.link, "replaced by links"], [d.emptied, "emptied"], [d.halved, "cut to less than half"]];
  const parts = how.filter(([xs]) => xs.length > 0).map(([xs, word]) => `${xs.length} ${word}`);
  const some = [...d.link, ...d.emptied, ...d.halved].slice(0, 3);
  return `destroys ${total} files' content: ${parts.join(", ")} (${some.join(", ")}${total > some.length ? ", …" : ""})`;
}

/** Whether `e` creates or changes a file or link where an interpreter loads it instead of a source. */
function writesLoadedCache(e: ChangeEntry): boolean {
  return e.after !== null && e.after.type !== "dir" && isLoadedCache(e.path);
}

/** The walk's links with `more` added (a path the walk found keeps the walk's entry). */
function withLinks(scanned: Awaited<ReturnType<typeof scanLinks>>, more: readonly WorkspaceLink[]): Awaited<ReturnType<typeof scanLinks>> {
  if (more.length === 0) return scanned;
  const found = new Set(scanned.links.map((l) => l.path));
  return { ...scanned, links: [...scanned.links, ...more.filter((l) => !found.has(l.path))] };
}

/**
 * The entries a change set opens to other users' writes: an existing file or directory that gains
 * the group or the "other" write bit, or a new one created writable by others (0o002). Another
 * local user could then rewrite them (a world- or group-writable `.git` lets them plant a config
 * the person's git runs). A new path's group write is left alone: a umask of 002 gives it to every
 * file a user makes under user-private groups.
 */
export function worldWritable(entries: readonly ChangeEntry[]): ChangeEntry[] {
  return entries.filter((e) => {
    if (!e.after || e.after.type === "symlink") return false;
    const existed = e.before !== null && e.before.type === e.after.type;
    if (!existed) return (e.after.mode & 0o002) !== 0;
    return (e.after.mode & ~e.before!.mode & 0o022) !== 0;
  });
}

/**
 * Whether a link at `rel` names a file that holds a change set itself (a secret, a file that runs
 * later): a new name for `.env` is as sensitive as `.env` (a reader outside the box, or one that
 * follows a name, would read the secret under an innocent name). `link` is judged in its normal
 * form, which is where it leads once `linkNamesWorkspaceFile` accepted it (plain directories, no
 * `..` after a name).
 */
function linkTargetHolds(rel: string, link: string | null | undefined, holds: (rel: string) => boolean): boolean {
  if (!link || path.posix.isAbsolute(link)) return false;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(rel), link));
  return target !== ".." && !target.startsWith("../") && holds(target);
}

/** A permission mode as four octal digits ("0777"). */
function octal4(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, "0");
}

function bulkyCount(rows: FileChangeRow[]): number {
  return rows.filter((r) => r.bulky).length;
}

function octal(mode: number): string {
  return `100${mode.toString(8).padStart(3, "0")}`;
}

/** The top directory a bulky path is summarised under ("node_modules", "pkg/node_modules"). */
function bulkyRoot(rel: string): string {
  const parts = rel.split("/");
  const i = parts.findIndex((p) => BULKY_DIRS.has(p));
  return i >= 0 ? parts.slice(0, i + 1).join("/") : parts.slice(0, Math.min(parts.length, 1)).join("/");
}

function fileDiff(rel: string, before: Buffer | null, after: Buffer | null, e: ChangeEntry): { diff: string; additions: number; deletions: number } {
  const big = (before?.length ?? 0) > DIFF_FILE_MAX_BYTES || (after?.length ?? 0) > DIFF_FILE_MAX_BYTES;
  // Files without a line diff are written as git writes binary files, so a diff viewer keeps the
  // files that follow in their own cards (a free-form line there swallowed the next header).
  const a = before ? `a/${rel}` : "/dev/null";
  const b = after ? `b/${rel}` : "/dev/null";
  if (big) return { diff: `diff --git a/${rel} b/${rel}\nBinary files ${a} and ${b} differ\n`, additions: 0, deletions: 0 };
  if (after) return diffFileBytes(rel, before, after);
  // A deleted file: every line removed.
  const profile = profileText(before!);
  if (profile.binary) return { diff: `diff --git a/${rel} b/${rel}\ndeleted file mode ${octal(e.before?.mode ?? 0o644)}\nBinary files ${a} and /dev/null differ\n`, additions: 0, deletions: 0 };
  return diffTexts(`a/${rel}`, "/dev/null", decodeForDisplay(before!, profile), "");
}
