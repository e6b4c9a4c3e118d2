import picomatch from "picomatch";
import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { defineTool, type ToolContext } from "@/lib/tools/define-tool";
import { openForRead, resolveInWorkspace, type FencedPath } from "@/lib/workspace/fence";
import { HEAVY_DIRS, walkTree, type TreeEntry } from "@/lib/workspace/read-tree";
import { isUtf8 } from "node:buffer";
import { chooseEncoding, decodeBytes } from "@/lib/workspace/encoding";
import { SNIFF_BYTES, sniffText } from "@/lib/workspace/read-sniff";
import { LineMatcher, MatchFailure, type LineHit } from "@/lib/workspace/search-matcher";
import { MASKED_OUTPUT_NOTE } from "@/lib/redact";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { sensitivePathRule } from "@/lib/policy/rule-match";
import { sliceCodePoints } from "@/lib/unicode";

/** Deepest directory level walked. */
const MAX_DEPTH = 64;
/** How many skipped sensitive files a result names (the count covers them all). */
const MAX_SENSITIVE_NAMED = 20;
/** Most directory entries looked at in one call. */
const MAX_SCAN_ENTRIES = 200_000;
/** Files larger than this are not searched for text (counted in `files_skipped.too_large`). */
const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** Total bytes read for a text search in one call. */
const MAX_TOTAL_BYTES = 256 * 1024 * 1024;
/** Characters of a matching line returned (a window around the match). */
const MAX_LINE_CHARS = 300;
/** Characters shown before the match when a line is windowed. */
const LEAD_CHARS = 80;
/** Characters of the query quoted in an error message. */
const QUOTE_CHARS = 120;

/** Arguments of search_files (at least one of `pattern` / `query`, checked in `run`). */
export const SearchFilesInput = z
  .object({
    pattern: z
      .string()
      .min(1)
      .optional()
      .describe('Glob on file paths relative to `path` (picomatch syntax, e.g. "**/*.ts", "src/**/test_*.py"); a glob without "/" matches file names at any depth ("*.md"). Without `query`, the matching files are returned.'),
    query: z
      .string()
      .min(1)
      .optional()
      .describe("Text to find inside files (a literal string unless regex is true). Returns matching lines with file path and 1-based line number."),
    regex: z.boolean().default(false).describe("Treat query as a JavaScript regular expression (default false: literal text)."),
    case_sensitive: z.boolean().default(true).describe("Match query case-sensitively (default true, like grep)."),
    path: z
      .string()
      .default(".")
      .describe('Directory to search under: relative to the workspace root (default "."), or absolute inside it. .git and node_modules are skipped unless this points inside them.'),
    include: z.string().min(1).optional().describe('Only search files whose path (relative to `path`) matches this glob, e.g. "*.{ts,tsx}".'),
    max_results: z.number().int().min(1).max(1000).default(100).describe("Maximum matches (or files) returned, 1-1000 (default 100)."),
  })
  .strict();

type SearchArgs = z.infer<typeof SearchFilesInput>;

/** One matching line. */
export interface SearchMatch {
  /** Workspace-relative path. */
  path: string;
  /** 1-based line number. */
  line: number;
  /** 1-based column (UTF-16 code units) of the first match in the line. */
  column: number;
  /** The line without its line ending, windowed to at most MAX_LINE_CHARS characters ("…" marks cuts). */
  text: string;
}

/** The `data` of a successful search_files call. */
export interface SearchFilesOutput {
  /** "content" when `query` was given (matches), "files" otherwise (files). */
  mode: "content" | "files";
  /** Canonical workspace-relative directory searched ("." for the root). */
  path: string;
  matches?: SearchMatch[];
  files?: string[];
  /** True when more results exist than returned, or a scan limit stopped the search early. */
  truncated: boolean;
  /** Files considered (after the pattern/include filters). */
  files_scanned: number;
  /**
   * Files not searched (or listed), by cause. `sensitive`: files a sensitive-path rule covers
   * (`.env*`, keys, `.git/**`…); their content is read only through read_file, which asks.
   */
  files_skipped: { binary: number; too_large: number; unreadable: number; sensitive: number };
  /** Up to MAX_SENSITIVE_NAMED of the skipped sensitive files, with the rule that covers each. */
  sensitive_skipped?: Array<{ path: string; rule: string }>;
  /** How to read a skipped sensitive file (present when some were skipped). */
  note?: string;
  bytes_scanned: number;
}

function compileGlob(glob: string, argument: string): (path: string) => boolean {
  try {
    return picomatch(glob, { dot: true, basename: !glob.includes("/") });
  } catch (err) {
    throw new ToolError("invalid_arguments", `Invalid glob in ${argument}: ${(err as Error).message}`, { reason: "invalid_glob", argument });
  }
}

/** The query as RegExp source and flags (literal text escaped unless `regex`), checked by compiling it. */
function compileQuery(args: SearchArgs): { source: string; flags: string } {
  const source = args.regex ? args.query! : args.query!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const flags = args.case_sensitive ? "" : "i";
  try {
    new RegExp(source, flags);
  } catch (err) {
    throw new ToolError("invalid_arguments", `Invalid regular expression ${quote(args.query!)}: ${regexCause(err)}.`, {
      reason: "invalid_regex",
      argument: "query",
    });
  }
  return { source, flags };
}

/** The query for a message: JSON-quoted, cut to QUOTE_CHARS characters (a query may be megabytes long). */
function quote(query: string): string {
  return JSON.stringify(query.length > QUOTE_CHARS ? `${query.slice(0, QUOTE_CHARS)}…` : query);
}

/** What V8 says is wrong, without the pattern it repeats ("Invalid regular expression: /…/i: Unterminated group"). */
function regexCause(err: unknown): string {
  const message = (err as Error).message;
  return message.slice(message.lastIndexOf(": ") + 2);
}

/** The line, or a window of it around the match at `index`, at most MAX_LINE_CHARS long. */
function windowLine(line: string, index: number): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const start = Math.max(0, Math.min(index - LEAD_CHARS, line.length - MAX_LINE_CHARS));
  const end = start + MAX_LINE_CHARS;
  return `${start > 0 ? "…" : ""}${sliceCodePoints(line, start, end)}${end < line.length ? "…" : ""}`;
}

/** Search state shared across files. */
interface Scan {
  matches: SearchMatch[];
  files: string[];
  filesScanned: number;
  skipped: SearchFilesOutput["files_skipped"];
  bytes: number;
  truncated: boolean;
}

/** Reads one fenced file (bounded) and returns its text, or null when it is skipped. */
async function readText(ctx: ToolContext, rel: string, scan: Scan): Promise<string | null> {
  let fenced: FencedPath;
  try {
    fenced = await resolveInWorkspace(ctx.workspace, rel);
  } catch {
    scan.skipped.unreadable++;
    return null;
  }
  const handle = await openForRead(ctx.workspace, fenced).catch(() => null);
  if (!handle) {
    scan.skipped.unreadable++;
    return null;
  }
  try {
    const { size } = await handle.stat();
    if (size > MAX_FILE_BYTES) {
      scan.skipped.too_large++;
      return null;
    }
    if (scan.bytes + size > MAX_TOTAL_BYTES) {
      scan.truncated = true;
      return null;
    }
    const bytes = await handle.readFile();
    scan.bytes += bytes.length;
    // Decoded in the file's own encoding (BOM, UTF-8, the workspace's legacy setting, detection), as read_file shows it.
    const sniffed = await sniffText(bytes.subarray(0, SNIFF_BYTES), bytes.length, { legacy: ctx.config.legacyEncoding }).catch(() => null);
    let encoding = sniffed?.encoding;
    if (sniffed?.source === "utf8" && bytes.length > SNIFF_BYTES && !isUtf8(bytes.subarray(sniffed.bomLength))) {
      // Valid UTF-8 at the start only: choose again on the whole file.
      encoding = chooseEncoding(bytes.subarray(sniffed.bomLength), null, { legacy: ctx.config.legacyEncoding, complete: true }).encoding;
    }
    const text = sniffed && encoding ? decodeBytes(bytes.subarray(sniffed.bomLength), encoding) : null;
    if (text === null || text.includes("\u0000")) {
      scan.skipped.binary++;
      return null;
    }
    return text;
  } finally {
    await handle.close();
  }
}

/** Adds the hits of one file to the scan; returns false once `max` matches are exceeded. */
function addHits(text: string, rel: string, hits: LineHit[], max: number, scan: Scan): boolean {
  for (const hit of hits) {
    if (scan.matches.length === max) {
      scan.truncated = true;
      return false;
    }
    const line = text.slice(hit.start, hit.end);
    scan.matches.push({ path: rel, line: hit.line, column: hit.index + 1, text: windowLine(line, hit.index) });
  }
  return true;
}

/**
 * The error an agent gets when matching stopped (MatchFailure from the worker), all
 * `invalid_arguments`: detail.reason "regex_timeout" (the call's budget ran out),
 * "regex_too_complex" (backtracking stack or memory exhausted), "invalid_regex" / "query_too_long"
 * (V8 cannot compile the pattern). An error rather than partial results: results cut off at an
 * arbitrary file would read as a complete or merely capped search, while the fix (a simpler
 * pattern, a literal query, a narrower include/path) is on the agent's side; detail.path names
 * the file being searched when matching stopped, so it can also be excluded.
 */
function matchFailureError(failure: MatchFailure, args: SearchArgs, budgetMs: number, rel: string, scan: Scan): ToolError {
  const detail = { argument: "query", path: rel, budget_ms: budgetMs, files_scanned: scan.filesScanned, matches_found: scan.matches.length };
  const what = args.regex ? `The regular expression ${quote(args.query!)}` : `The query ${quote(args.query!)}`;
  const narrow = "narrow the search with include or path";
  switch (failure.kind) {
    case "timeout":
      return new ToolError(
        "invalid_arguments",
        args.regex
          ? `${what} did not finish within the ${budgetMs} ms search budget (stopped in ${rel}); it most likely backtracks catastrophically (nested or overlapping quantifiers such as (a+)+, (.*)*, (\\w+\\s?)*). Simplify the pattern (no nested quantifiers, anchor it, use [^"]* instead of .*), ${narrow}, or search for a literal query (regex: false).`
          : `${what} did not finish within the ${budgetMs} ms search budget (stopped in ${rel}). Search for a shorter, more distinctive part of it, or ${narrow}.`,
        { reason: "regex_timeout", ...detail },
      );
    case "too_complex":
      return new ToolError("invalid_arguments", `${what} is too complex to run on ${rel} (${failure.message}). Simplify it or ${narrow}.`, {
        reason: "regex_too_complex",
        ...detail,
      });
    case "invalid":
      return new ToolError("invalid_arguments", `${what} cannot be compiled: ${regexCause(failure)}. ${args.regex ? "Simplify the pattern." : "Search for a shorter part of it."}`, {
        reason: args.regex ? "invalid_regex" : "query_too_long",
        ...detail,
      });
  }
}

/**
 * Matches one file's text in the call's matcher and adds its hits; returns false once
 * `max_results` is exceeded. Throws `invalid_arguments` (see matchFailureError) when matching stops.
 */
async function matchFile(matcher: LineMatcher, text: string, rel: string, args: SearchArgs, budgetMs: number, scan: Scan): Promise<boolean> {
  let hits: LineHit[];
  try {
    hits = await matcher.match(text, args.max_results - scan.matches.length + 1);
  } catch (err) {
    throw err instanceof MatchFailure ? matchFailureError(err, args, budgetMs, rel, scan) : err;
  }
  return addHits(text, rel, hits, args.max_results, scan);
}

function workspaceRelative(base: FencedPath, entry: TreeEntry): string {
  return base.relative ? `${base.relative}/${entry.relative}` : entry.relative;
}

/** JSON Schema source of search_files' `data`. */
const SearchFilesOutputSchema = z.looseObject({
  mode: z.enum(["content", "files"]),
  path: z.string(),
  matches: z.array(z.looseObject({ path: z.string(), line: z.number().int(), column: z.number().int(), text: z.string() })).optional(),
  files: z.array(z.string()).optional(),
  truncated: z.boolean(),
  files_scanned: z.number().int(),
  files_skipped: z.looseObject({ binary: z.number().int(), too_large: z.number().int(), unreadable: z.number().int(), sensitive: z.number().int() }),
  sensitive_skipped: z.array(z.looseObject({ path: z.string(), rule: z.string() })).optional(),
  note: z.string().optional(),
  bytes_scanned: z.number().int(),
});

/**
 * search_files: find files by glob, or lines by text / regular expression, under a workspace
 * directory. Walks without following symlinks, skips .git and node_modules unless `path` is
 * inside them, skips binary and very large files, and bounds entries and bytes scanned.
 * Contents are matched in a worker thread with a time budget (lib/workspace/search-matcher.ts),
 * so no query, however it backtracks, can stall the server.
 */
export const searchFilesTool = defineTool({
  name: "search_files",
  title: "Search files",
  description: [
    "Find files by name or find text inside files in the workspace. Use this instead of find, grep or rg.",
    'With pattern only: returns the files whose path (relative to `path`) matches the glob, e.g. {"pattern": "**/*.test.ts"}.',
    'With query: returns matching lines as {path, line, column, text} (line is 1-based, ready for read_file offset = line - 1); narrow with include (glob) or pattern. query is literal text unless regex is true; case_sensitive defaults to true.',
    "Skips binary files, files over 8 MiB, symlinks, and .git / node_modules (unless path points inside them). Long lines are shown as a window around the match.",
    "Text search skips sensitive files (those a policy rule makes read_file ask for: .env*, keys, .git/…): files_skipped.sensitive counts them, sensitive_skipped names some; read one with read_file, which asks a reviewer.",
    "Files in legacy encodings (GBK, Shift_JIS, windows-1252, …) are searched as decoded text, as read_file shows them, so a query in Chinese or Japanese finds them.",
    "truncated = true means there are more results than max_results (or a scan limit was hit): narrow the search.",
    "A query that takes longer than the search time budget (a regex that backtracks catastrophically, e.g. (a+)+) fails with reason regex_timeout: simplify the regex or use a literal query.",
    MASKED_OUTPUT_NOTE,
  ].join("\n"),
  input: SearchFilesInput,
  risk: "read",
  reproducible: true,
  output: SearchFilesOutputSchema,
  subject: (args) => ({ paths: [args.path] }),
  async run(args, ctx): Promise<SearchFilesOutput> {
    if (!args.pattern && !args.query) {
      throw new ToolError("invalid_arguments", "Give pattern (a glob on file paths), query (text to find), or both.", { reason: "missing_pattern_or_query" });
    }
    const filters = [args.pattern && compileGlob(args.pattern, "pattern"), args.include && compileGlob(args.include, "include")].filter(
      (f): f is (p: string) => boolean => typeof f === "function",
    );
    const query = args.query ? compileQuery(args) : null;
    const budgetMs = query ? ctx.config.searchTimeoutMs : 0;
    ctx.note({ pathRaw: args.path, target: args.path });
    const base = await resolveInWorkspace(ctx.workspace, args.path);
    ctx.note({ pathResolved: base.absolute, target: base.relative || "." });
    if (base.kind === "missing") throw new ToolError("not_found", `No such directory: ${base.relative}`, { path: base.relative });
    if (base.kind !== "directory") {
      throw new ToolError("path_invalid", `${base.relative} is not a directory; search_files searches under a directory.`, {
        reason: "not_a_directory",
        path: base.relative,
      });
    }
    const expandHeavy = base.relative.split("/").some((c) => HEAVY_DIRS.has(c));
    const scan: Scan = { matches: [], files: [], filesScanned: 0, skipped: { binary: 0, too_large: 0, unreadable: 0, sensitive: 0 }, bytes: 0, truncated: false };
    const rules = ctx.policyRules ?? DEFAULT_RULES;
    const sensitiveNamed: Array<{ path: string; rule: string }> = [];
    let seen = 0;
    let matcher: LineMatcher | null = null;
    try {
      for await (const entry of walkTree(base.absolute, {
        maxDepth: MAX_DEPTH,
        dontEnter: (e) => !expandHeavy && HEAVY_DIRS.has(e.name),
        signal: ctx.signal,
      })) {
        if (++seen > MAX_SCAN_ENTRIES) {
          scan.truncated = true;
          break;
        }
        if (entry.type !== "file" || !filters.every((f) => f(entry.relative))) continue;
        const rel = workspaceRelative(base, entry);
        const sensitive = query ? sensitivePathRule(rel, rules) : null;
        if (sensitive) {
          scan.skipped.sensitive++;
          if (sensitiveNamed.length < MAX_SENSITIVE_NAMED) sensitiveNamed.push({ path: rel, rule: sensitive.id });
          continue;
        }
        scan.filesScanned++;
        if (!query) {
          if (scan.files.length === args.max_results) {
            scan.truncated = true;
            break;
          }
          scan.files.push(rel);
          continue;
        }
        const text = await readText(ctx, rel, scan);
        if (scan.truncated) break;
        if (text === null) continue;
        matcher ??= await LineMatcher.open({ ...query, budgetMs, signal: ctx.signal });
        if (!(await matchFile(matcher, text, rel, args, budgetMs, scan))) break;
      }
    } finally {
      await matcher?.close();
    }
    const count = query ? scan.matches.length : scan.files.length;
    ctx.note({ truncated: scan.truncated, summary: `${count} ${query ? "matches" : "files"} under ${base.relative || "."}` });
    return {
      mode: query ? "content" : "files",
      path: base.relative || ".",
      ...(query ? { matches: scan.matches } : { files: scan.files }),
      truncated: scan.truncated,
      files_scanned: scan.filesScanned,
      files_skipped: scan.skipped,
      bytes_scanned: scan.bytes,
      ...(scan.skipped.sensitive > 0 && {
        sensitive_skipped: sensitiveNamed,
        note: `${scan.skipped.sensitive} file${scan.skipped.sensitive === 1 ? " was" : "s were"} skipped as sensitive (a policy rule covers ${scan.skipped.sensitive === 1 ? "it" : "them"}: secrets, keys, repository internals). To see one, call read_file on its path; that read asks a reviewer.`,
      }),
    };
  },
});
