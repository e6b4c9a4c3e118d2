import fs from "node:fs/promises";
import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { defineTool, type Workspace } from "@/lib/tools/define-tool";
import { resolveInWorkspace, type FencedPath } from "@/lib/workspace/fence";
import { HEAVY_DIRS, walkTree, type EntryType, type TreeEntry } from "@/lib/workspace/read-tree";

/** Most entries looked at in one call; a deeper tree is reported with `scan_capped: true`. */
const MAX_SCAN_ENTRIES = 50_000;

/** Arguments of list_directory; defaults are filled by the schema. */
export const ListDirectoryInput = z
  .object({
    path: z
      .string()
      .default(".")
      .describe('Directory to list: relative to the workspace root (default "." = the root), or an absolute path inside it.'),
    depth: z
      .number()
      .int()
      .min(1)
      .max(5)
      .default(1)
      .describe("How many levels to list: 1 = direct children only (default), up to 5. The contents of .git and node_modules are listed only when path points inside them."),
    offset: z.number().int().min(0).default(0).describe("Entries to skip (paging; use next_offset from the previous result)."),
    limit: z.number().int().min(1).max(1000).default(200).describe("Maximum entries to return (1-1000, default 200)."),
    include_hidden: z.boolean().default(true).describe('Include names starting with "." (default true).'),
  })
  .strict();

/** Where a listed symlink points, seen through the workspace fence. */
type LinkTargetType = "file" | "directory" | "other" | "missing" | "outside_workspace" | "broken";

/** One listed entry. */
export interface ListedEntry {
  name: string;
  /** Workspace-relative path, "/"-separated. */
  path: string;
  type: EntryType;
  /** Size in bytes (of the link itself for a symlink). */
  size_bytes: number;
  /** Last modification, ISO 8601. */
  mtime: string;
  /** For symlinks: the workspace-relative target, or null when it is outside or broken. */
  symlink_target?: string | null;
  symlink_target_type?: LinkTargetType;
}

/** The `data` of a successful list_directory call. */
export interface ListDirectoryOutput {
  /** Canonical workspace-relative path of the listed directory ("." for the root). */
  path: string;
  depth: number;
  offset: number;
  limit: number;
  /** Entries found (all levels up to depth). */
  total: number;
  /** True when the walk stopped at its entry cap: `total` is then a lower bound. */
  scan_capped: boolean;
  truncated: boolean;
  next_offset: number | null;
  entries: ListedEntry[];
}

/** Describes a symlink's target without following it anywhere outside the workspace. */
async function linkTarget(ws: Workspace, relative: string): Promise<Pick<ListedEntry, "symlink_target" | "symlink_target_type">> {
  try {
    const target = await resolveInWorkspace(ws, relative);
    return { symlink_target: target.relative || ".", symlink_target_type: target.kind };
  } catch (err) {
    if (err instanceof ToolError && err.errorName === "path_outside_workspace") {
      return { symlink_target: null, symlink_target_type: "outside_workspace" };
    }
    if (err instanceof ToolError) return { symlink_target: null, symlink_target_type: "broken" };
    throw err;
  }
}

function workspaceRelative(base: FencedPath, entry: TreeEntry): string {
  return base.relative ? `${base.relative}/${entry.relative}` : entry.relative;
}

async function describe(ws: Workspace, base: FencedPath, entry: TreeEntry): Promise<ListedEntry | null> {
  const st = await fs.lstat(entry.absolute).catch(() => null);
  if (!st) return null; // removed during the listing
  const rel = workspaceRelative(base, entry);
  const listed: ListedEntry = { name: entry.name, path: rel, type: entry.type, size_bytes: st.size, mtime: st.mtime.toISOString() };
  return entry.type === "symlink" ? { ...listed, ...(await linkTarget(ws, rel)) } : listed;
}

/** True when the listed directory is itself inside .git or node_modules (then they are expanded). */
function insideHeavyDir(base: FencedPath): boolean {
  return base.relative.split("/").some((c) => HEAVY_DIRS.has(c));
}

/** JSON Schema source of list_directory's `data`. */
const ListDirectoryOutputSchema = z.looseObject({
  path: z.string(),
  depth: z.number().int(),
  offset: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
  scan_capped: z.boolean(),
  truncated: z.boolean(),
  next_offset: z.number().int().nullable(),
  entries: z.array(
    z.looseObject({
      name: z.string(),
      path: z.string(),
      type: z.enum(["file", "directory", "symlink", "other"]),
      size_bytes: z.number().int(),
      mtime: z.string(),
      symlink_target: z.string().nullable().optional(),
      symlink_target_type: z.enum(["file", "directory", "other", "missing", "outside_workspace", "broken"]).optional(),
    }),
  ),
});

/**
 * list_directory: the entries of a workspace directory, depth-first and sorted by name, paged.
 * Symlinks are listed (with where they point, through the fence) and never followed.
 */
export const listDirectoryTool = defineTool({
  name: "list_directory",
  title: "List directory",
  description: [
    "List the files and directories under a workspace directory. Use this instead of ls or find.",
    "Entries come depth-first, sorted by name, each directory before its contents, with type (file, directory, symlink, other), size_bytes and mtime; paths are relative to the workspace root.",
    "depth 1 (default) lists direct children; up to 5 levels. Symlinks are shown with their target but never followed.",
    "Paging: when truncated is true, call again with offset = next_offset.",
  ].join("\n"),
  input: ListDirectoryInput,
  risk: "read",
  reproducible: true,
  output: ListDirectoryOutputSchema,
  subject: (args) => ({ paths: [args.path] }),
  async run(args, ctx): Promise<ListDirectoryOutput> {
    ctx.note({ pathRaw: args.path, target: args.path });
    const base = await resolveInWorkspace(ctx.workspace, args.path);
    ctx.note({ pathResolved: base.absolute, target: base.relative || "." });
    if (base.kind === "missing") throw new ToolError("not_found", `No such directory: ${base.relative}`, { path: base.relative });
    if (base.kind !== "directory") {
      throw new ToolError("path_invalid", `${base.relative} is not a directory; use read_file to read a file.`, {
        reason: "not_a_directory",
        path: base.relative,
      });
    }
    const expandHeavy = insideHeavyDir(base);
    const found: TreeEntry[] = [];
    let scanCapped = false;
    for await (const entry of walkTree(base.absolute, {
      maxDepth: args.depth,
      skipHidden: !args.include_hidden,
      dontEnter: (e) => !expandHeavy && HEAVY_DIRS.has(e.name),
      signal: ctx.signal,
    })) {
      if (found.length === MAX_SCAN_ENTRIES) {
        scanCapped = true;
        break;
      }
      found.push(entry);
    }
    const page = found.slice(args.offset, args.offset + args.limit);
    const entries = (await Promise.all(page.map((e) => describe(ctx.workspace, base, e)))).filter((e) => e !== null);
    const next = args.offset + page.length;
    const truncated = scanCapped || next < found.length;
    ctx.note({ truncated, summary: `${base.relative || "."}: ${entries.length} of ${found.length} entries` });
    return {
      path: base.relative || ".",
      depth: args.depth,
      offset: args.offset,
      limit: args.limit,
      total: found.length,
      scan_capped: scanCapped,
      truncated,
      next_offset: next < found.length ? next : null,
      entries,
    };
  },
});
