import fs from "node:fs/promises";
import path from "node:path";
import type { ChangeEntry, EntryType } from "@/lib/effects/read-change-set";

/**
 * Symlinks judged by where the kernel takes them, not by how their target reads.
 *
 * A link's target is resolved here component by component against the workspace as a change set
 * leaves it (the change set's own entries first, then the workspace on disk), as the kernel does:
 * a `..` after a link climbs from where the link led, not from where its name sits, so
 * `s/../../x` with `s` a link can leave the workspace while the same text normalised as a string
 * stays inside. And a link gives its name to whatever its target becomes: a link to a file whose
 * target a later command turns into a directory has, from then on, a directory of that command's
 * choosing under its name. So a change set is judged under every name a workspace link gives its
 * paths (`linkAliases`), and one that changes the type of a path a link resolves through is held
 * (`retypedLinkTargets`).
 */

/** The workspace as a change set leaves it: the change set's entries first, then the disk. */
export interface AfterView {
  /** Canonical workspace root. */
  root: string;
  /** The change set's entries by path. */
  entries: ReadonlyMap<string, ChangeEntry>;
}

/** What a path is in an AfterView; "other" for FIFOs, sockets and devices. */
type ViewType = EntryType | "other" | null;

/**
 * Builds the view of `entries` over the workspace at `root` (canonical). A path whose type the
 * change set changes comes as two entries (the old one deleted, the new one created): they are
 * merged into one with the old state before and the new one after.
 */
export function afterView(root: string, entries: readonly ChangeEntry[]): AfterView {
  const map = new Map<string, ChangeEntry>();
  for (const e of entries) {
    const seen = map.get(e.path);
    map.set(e.path, seen ? { ...e, before: seen.before ?? e.before, after: e.after } : e);
  }
  return { root, entries: map };
}

/**
 * The type (and link target) of the workspace-relative path `rel` in the view. The caller walks
 * paths prefix by prefix, so every proper prefix of `rel` is a plain directory of the view: the
 * disk is asked only when no prefix is a directory the change set made in place of something
 * else (a fresh directory holds only what the change set lists).
 */
async function typeAt(view: AfterView, rel: string): Promise<{ type: ViewType; link?: string }> {
  const e = view.entries.get(rel);
  if (e) return e.after ? { type: e.after.type, link: e.after.link } : { type: null };
  const parts = rel.split("/");
  for (let i = 1; i < parts.length; i++) {
    const p = view.entries.get(parts.slice(0, i).join("/"));
    if (p && (p.after?.type !== "dir" || p.before?.type !== "dir")) return { type: null };
  }
  const abs = path.join(/*turbopackIgnore: true*/ view.root, rel);
  const st = await fs.lstat(/*turbopackIgnore: true*/ abs).catch(() => null);
  if (!st) return { type: null };
  if (st.isSymbolicLink()) return { type: "symlink", link: await fs.readlink(/*turbopackIgnore: true*/ abs).catch(() => undefined) };
  return { type: st.isDirectory() ? "dir" : st.isFile() ? "file" : "other" };
}

/**
 * Whether a relative link target climbs only at its start: every `..` comes before the first
 * plain name (`../../pkg/bin.js`, `docs/README.md`, `./x`; not `D/../../x`, `a/b/..`). Package
 * managers and people write such targets. It matters because a link is judged once, when it is
 * made, while what its path passes through can change later: a `..` after a name climbs from
 * wherever that name leads then (a directory now, a link some later command makes), so
 * `D/../../../root/x` can leave the workspace once `D` is a link, even where that later change is
 * never judged against this link (links inside `node_modules` are not walked). A `..` at the
 * start climbs the link's own parent directories, which stay where they are while the link
 * exists, and each plain name after them resolves inside the workspace whatever it becomes (a
 * new link to anything but a workspace file is held), so such a link stays inside. `.` and empty
 * components climb nothing and are allowed. An absolute or empty target is not relative: false.
 */
export function climbsOnlyAtStart(link: string): boolean {
  if (link === "" || link.startsWith("/")) return false;
  let named = false;
  for (const c of link.split("/")) {
    if (c === "" || c === ".") continue;
    if (c !== "..") named = true;
    else if (named) return false;
  }
  return true;
}

/**
 * Whether a symlink at `rel` with target `link` names a regular file inside the workspace by a
 * chain of plain directories, in the view: a relative target whose every component before the
 * last is a directory (never a link, of the change set or of the workspace), whose `..` never
 * climbs above the workspace root, and whose last component is a regular file. Anything else
 * (an absolute target, a `..` after a name (`climbsOnlyAtStart`), a link met on the way, a directory, a
 * missing path, a special file) is not.
 * The link's own parent directories are directories of the view (the change set holds it there),
 * so a `..` that climbs through them is what the kernel does too.
 */
export async function linkNamesWorkspaceFile(view: AfterView, rel: string, link: string | null | undefined): Promise<boolean> {
  if (!link || link.endsWith("/") || !climbsOnlyAtStart(link)) return false;
  const stack = rel.split("/").slice(0, -1);
  const parts = link.split("/");
  for (let i = 0; i < parts.length; i++) {
    const c = parts[i];
    if (c === "" || c === ".") continue;
    if (c === "..") {
      if (stack.length === 0) return false;
      stack.pop();
      continue;
    }
    stack.push(c);
    const { type } = await typeAt(view, stack.join("/"));
    const last = parts.slice(i + 1).every((r) => r === "");
    if (last) return type === "file";
    if (type !== "dir") return false;
  }
  // The target ended on "." or "..": a directory.
  return false;
}

/** Where a link leads in the view, following every link on the way. */
export interface Resolved {
  /** Workspace-relative path it ends at ("" the root), or null when it leaves the workspace, loops or stops at a non-directory. */
  end: string | null;
  /** The type at `end` (null: missing). */
  endType: ViewType;
  /** Every workspace path the resolution looked at, in order (links followed included). */
  deps: string[];
}

/** Most links one resolution follows (the kernel's limit is 40). */
const MAX_HOPS = 40;

/**
 * Resolves the link at `rel` (target `link`) in the view as the kernel would, following links met
 * on the way (an absolute target counts when it names a path under the root).
 */
export async function resolveLink(view: AfterView, rel: string, link: string): Promise<Resolved> {
  const deps: string[] = [];
  let stack = rel.split("/").slice(0, -1);
  let queue = link.split("/");
  let hops = 0;
  const rooted = (target: string): string[] | null => {
    if (!target.startsWith("/")) return target.split("/");
    const root = view.root.endsWith("/") ? view.root : `${view.root}/`;
    if (target === view.root) return [];
    return target.startsWith(root) ? target.slice(root.length).split("/") : null;
  };
  const first = rooted(link);
  if (!first) return { end: null, endType: null, deps };
  if (link.startsWith("/")) stack = [];
  queue = first;
  let type: ViewType = "dir";
  while (queue.length > 0) {
    const c = queue.shift()!;
    if (c === "" || c === ".") continue;
    if (type !== "dir") return { end: null, endType: null, deps };
    if (c === "..") {
      if (stack.length === 0) return { end: null, endType: null, deps };
      stack.pop();
      type = "dir";
      continue;
    }
    stack.push(c);
    const p = stack.join("/");
    deps.push(p);
    const at = await typeAt(view, p);
    type = at.type;
    if (at.type === "symlink") {
      if (++hops > MAX_HOPS || at.link === undefined) return { end: null, endType: null, deps };
      const next = rooted(at.link);
      if (!next) return { end: null, endType: null, deps };
      stack.pop();
      if (at.link.startsWith("/")) stack = [];
      queue = [...next, ...queue];
      type = "dir";
    }
  }
  return { end: stack.join("/"), endType: type, deps };
}

/** A symlink found in the workspace. */
export interface WorkspaceLink {
  path: string;
  target: string;
}

/** Most entries `scanLinks` looks at before it gives up (the result then says `complete: false`). */
export const LINK_SCAN_MAX_ENTRIES = 500_000;

/**
 * Every symlink in the workspace at `root`, found by one walk that never follows a link. Not
 * descended: git's object store, logs and LFS store inside a `.git` directory (thousands of files,
 * never links git reads), and the contents of `node_modules` (package-manager output, often
 * hundreds of thousands of entries): its own direct entries are listed, so `node_modules/.bin` made
 * a link is found, while the links a package manager makes inside (`.bin/vitest` → a package
 * file) are not; changes to package files apply as generated files whatever links name them.
 *
 * @returns the links (workspace-relative paths and targets) and whether the walk finished within
 *   `maxEntries` entries
 */
export async function scanLinks(root: string, maxEntries = LINK_SCAN_MAX_ENTRIES): Promise<{ links: WorkspaceLink[]; complete: boolean; entries: number }> {
  const links: WorkspaceLink[] = [];
  const stack: Array<{ rel: string; descend: boolean }> = [{ rel: "", descend: true }];
  let entries = 0;
  while (stack.length > 0) {
    const { rel, descend } = stack.pop()!;
    const abs = rel ? path.join(/*turbopackIgnore: true*/ root, rel) : root;
    const dirents = await fs.readdir(/*turbopackIgnore: true*/ abs, { withFileTypes: true }).catch(() => []);
    entries += dirents.length;
    if (entries > maxEntries) return { links, complete: false, entries };
    const inGit = rel === ".git" || rel.startsWith(".git/") || rel.includes("/.git/") || rel.endsWith("/.git");
    const linkReads: Array<Promise<void>> = [];
    for (const d of dirents) {
      const child = rel ? `${rel}/${d.name}` : d.name;
      if (d.isSymbolicLink()) {
        linkReads.push(
          fs.readlink(/*turbopackIgnore: true*/ path.join(/*turbopackIgnore: true*/ abs, d.name)).then(
            (target) => void links.push({ path: child, target }),
            () => undefined,
          ),
        );
      } else if (d.isDirectory() && descend) {
        if (inGit && (d.name === "objects" || d.name === "logs" || d.name === "lfs")) continue;
        stack.push({ rel: child, descend: d.name !== "node_modules" });
      }
    }
    await Promise.all(linkReads);
  }
  links.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { links, complete: true, entries };
}

/** One changed path seen under another name a link gives it. */
export interface LinkAlias {
  /** The name the link gives the changed path (`node_modules/.bin/vitest`). */
  alias: string;
  /** The changed path (`nm/.bin/vitest`). */
  path: string;
  /** The link that gives the name (`node_modules`). */
  link: string;
}

/** A change to the type of a path a workspace link resolves through. */
export interface RetypedTarget {
  link: string;
  target: string;
  /** The path whose type changed. */
  path: string;
  from: EntryType;
  to: ViewType;
}

/**
 * The names under which workspace links show the change set's paths, and the paths whose type it
 * changes under a link, for the links in `links` (the workspace's, as `scanLinks` found them)
 * that the change set leaves in place, and the links it makes.
 *
 * - an alias: a link that ends (in the view) at a path the change set changes, or at a directory
 *   above one, gives that path a second name: link + the rest of the path;
 * - a retyped target: a link that existed before resolves through (or to) a path that the change
 *   set makes a directory or a link where it was something else (a file, a directory, a link):
 *   from then on the link's name stands for a tree of the change set's choosing.
 * `incomplete` is true when more than MAX_ALIASES names came up (not all were given).
 */
export async function linkViews(view: AfterView, links: readonly WorkspaceLink[]): Promise<{ aliases: LinkAlias[]; retyped: RetypedTarget[]; incomplete: boolean }> {
  const aliases: LinkAlias[] = [];
  const retyped: RetypedTarget[] = [];
  const all: Array<WorkspaceLink & { existing: boolean }> = [];
  for (const l of links) {
    if (view.entries.has(l.path) || !(await parentsKept(view, l.path))) continue;
    all.push({ ...l, existing: true });
  }
  for (const e of view.entries.values()) if (e.after?.type === "symlink" && e.after.link !== undefined) all.push({ path: e.path, target: e.after.link, existing: false });
  // Changed paths by every prefix, so each link's end finds what lies below it without a scan.
  const byEnd = new Map<string, Array<WorkspaceLink>>();
  for (const l of all) {
    const r = await resolveLink(view, l.path, l.target);
    if (l.existing) {
      for (const d of r.deps) {
        const e = view.entries.get(d);
        // A path that did not exist (a link the person left dangling, to a build output) is
        // judged by the names the link gives what the command put there, not held for existing.
        if (!e?.after || !e.before || e.after.type === e.before.type) continue;
        if (e.after.type === "dir" || e.after.type === "symlink") retyped.push({ link: l.path, target: l.target, path: d, from: e.before?.type ?? null, to: e.after.type });
      }
    }
    // A link of the workspace that climbs out and comes back in (`../<workspace>/ci`, or an
    // absolute path through a host link) ends where the disk takes it now.
    const end = r.end ?? (l.existing ? await diskEnd(view.root, l.path) : null);
    if (end === null) continue;
    const list = byEnd.get(end) ?? [];
    list.push(l);
    byEnd.set(end, list);
  }
  if (byEnd.size === 0) return { aliases, retyped, incomplete: false };
  // A name a link gives may itself lie at or below another link's end (`.github` → `ci` while
  // `ci/workflows` → `../wf`): names are given again from the names found, a few rounds deep.
  const seen = new Set<string>(view.entries.keys());
  let round: Array<{ name: string; path: string }> = [...view.entries.keys()].map((p) => ({ name: p, path: p }));
  for (let depth = 0; depth < MAX_ALIAS_ROUNDS && round.length > 0; depth++) {
    const next: typeof round = [];
    for (const { name, path: changed } of round) {
      // Each prefix of the name ("" the root, then "a", "a/b", …) and the rest after it.
      for (let cut = 0; cut !== -1; cut = cut === name.length ? -1 : nextCut(name, cut)) {
        const found = byEnd.get(cut === 0 ? "" : name.slice(0, cut));
        if (!found) continue;
        for (const l of found) {
          if (l.path === name) continue;
          const rest = cut === 0 ? name : name.slice(cut + 1);
          const alias = rest ? `${l.path}/${rest}` : l.path;
          if (seen.has(alias)) continue;
          if (seen.size >= MAX_ALIASES) return { aliases, retyped, incomplete: true };
          seen.add(alias);
          aliases.push({ alias, path: changed, link: l.path });
          next.push({ name: alias, path: changed });
        }
      }
    }
    round = next;
  }
  return { aliases, retyped, incomplete: false };
}

/** The end of the next prefix of `name` after the one ending at `cut` (its length for the whole name). */
function nextCut(name: string, cut: number): number {
  const slash = name.indexOf("/", cut === 0 ? 0 : cut + 1);
  return slash === -1 ? name.length : slash;
}

/** Rounds of names given to names (links to directories holding links). */
const MAX_ALIAS_ROUNDS = 4;
/** Most names (changed paths and the names links give them) one change set is judged under. */
const MAX_ALIASES = 200_000;

/** Where the link at `rel` leads on disk, workspace-relative, or null when outside or missing. */
async function diskEnd(root: string, rel: string): Promise<string | null> {
  const real = await fs.realpath(/*turbopackIgnore: true*/ path.join(/*turbopackIgnore: true*/ root, rel)).catch(() => null);
  if (real === null) return null;
  if (real === root) return "";
  return real.startsWith(`${root}/`) ? real.slice(root.length + 1) : null;
}

/** Whether every parent directory of `rel` is a directory the change set left as it was. */
async function parentsKept(view: AfterView, rel: string): Promise<boolean> {
  const parts = rel.split("/");
  for (let i = 1; i < parts.length; i++) {
    const e = view.entries.get(parts.slice(0, i).join("/"));
    if (e && (e.after?.type !== "dir" || e.before?.type !== "dir")) return false;
  }
  return true;
}

/**
 * The child paths to probe below a link's name: for every glob (braces expanded), each tail of
 * its segments that starts right after a literal segment (`**\/node_modules/.bin/**` gives
 * `.bin/x` and `x`), with wildcards made concrete (`*` → `x`, `[a-z]` → `a`, `!(…)` dropped), plus
 * `x` and `x/x`. A name holds a tree when one of these children holds under it and not under a
 * plain name beside it (lib/effects/stage.ts `linkNameHoldsTree`).
 */
export function probeChildren(globs: readonly string[]): string[] {
  const out = new Set<string>(["x", "x/x"]);
  for (const glob of globs) {
    for (const alt of expandBraces(glob)) {
      const segs = alt.split("/");
      for (let i = 1; i < segs.length; i++) {
        if (segs[i - 1] === "**" || segs[i - 1] === "") continue;
        out.add(segs.slice(i).map(concreteSegment).join("/"));
      }
    }
  }
  return [...out];
}

/** A concrete name a glob segment matches (best effort: the caller checks with the real matcher). */
function concreteSegment(seg: string): string {
  if (seg === "**") return "x";
  return seg
    .replace(/!\([^)]*\)/g, "")
    .replace(/[@+?*]\(([^|)]*)[^)]*\)/g, "$1")
    .replace(/\[!?\^?(.)[^\]]*\]/g, "$1")
    .replace(/[*?]/g, "x");
}

/** Expands `{a,b}` alternatives, nested ones included (`**\/{.venv,venv}/{bin/**,x}` → four). */
export function expandBraces(glob: string): string[] {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === "\\") {
      i++;
      continue;
    }
    if (ch === "{") {
      if (depth === 0) open = i;
      depth++;
    } else if (ch === "}" && depth > 0) {
      depth--;
      if (depth === 0) {
        const inner = glob.slice(open + 1, i);
        const alts: string[] = [];
        let d = 0;
        let start = 0;
        for (let j = 0; j < inner.length; j++) {
          if (inner[j] === "{" || inner[j] === "(") d++;
          else if ((inner[j] === "}" || inner[j] === ")") && d > 0) d--;
          else if (inner[j] === "," && d === 0) {
            alts.push(inner.slice(start, j));
            start = j + 1;
          }
        }
        alts.push(inner.slice(start));
        const head = glob.slice(0, open);
        const tails = expandBraces(glob.slice(i + 1));
        return alts.flatMap((a) => expandBraces(head + a).flatMap((h) => tails.map((t) => h + t)));
      }
    }
  }
  return [glob];
}

/**
 * The other names the workspace's links give the files at `rels` (workspace-relative paths a tool
 * is about to write, as regular files), as the workspace is now: with `Makefile` →
 * `build/Makefile.in`, a write of `build/Makefile.in` is also a write of `Makefile`; with `.github`
 * → `ci`, `ci/workflows/x.yml` is also `.github/workflows/x.yml`. Uses a `scanLinks` walk at most
 * LINK_SCAN_REUSE_MS old (`recentScan`); a workspace too large to walk gives the names found so far.
 */
export async function linkNamesOf(root: string, rels: readonly string[]): Promise<string[]> {
  if (rels.length === 0) return [];
  const state = { type: "file" as const, mode: 0o644, size: 0 };
  const { links } = await recentScan(root);
  if (links.length === 0) return [];
  const view = afterView(root, rels.map((p) => ({ path: p, kind: "modified" as const, before: state, after: state })));
  const { aliases } = await linkViews(view, links);
  return [...new Set(aliases.map((a) => a.alias))];
}

/**
 * How long a write tool reuses a walk for links (ms). The walk costs 10–30 ms on a tree of 10,000
 * files, measured, and a write tool needs it on every call. The links an agent makes come from its
 * commands' change sets, and applying one drops the walk (`forgetLinkScans`), so a reused walk
 * misses only a link the person made in the last two seconds. A change set's own judgement
 * (lib/effects/stage.ts) always walks afresh.
 */
export const LINK_SCAN_REUSE_MS = 2000;

const recentScans = new Map<string, { at: number; scan: ReturnType<typeof scanLinks> }>();

/** `scanLinks(root)`, reused while it is at most LINK_SCAN_REUSE_MS old and no change set was applied since. */
export function recentScan(root: string): ReturnType<typeof scanLinks> {
  const kept = recentScans.get(root);
  if (kept && Date.now() - kept.at <= LINK_SCAN_REUSE_MS) return kept.scan;
  const scan = scanLinks(root);
  recentScans.set(root, { at: Date.now(), scan });
  // A walk that failed is not kept.
  scan.catch(() => recentScans.delete(root));
  return scan;
}

/** Drops the reused walks (of `root`, or all): a change set was applied there, its links may differ. */
export function forgetLinkScans(root?: string): void {
  if (root === undefined) recentScans.clear();
  else recentScans.delete(root);
}
