import { DEFAULT_PRESET, PRESET_NAMES, type PresetName } from "@/lib/policy/presets";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import picomatch from "picomatch";
import { z } from "zod";
import { canonicalEncoding, isUnicode, SUPPORTED_ENCODINGS } from "@/lib/workspace/encoding";
import { defaultCommandLimits, MAX_OUTPUT_CHARS, MAX_TIMEOUT_MS, withRuleLimits, type CommandLimits } from "@/lib/exec/limits";

/**
 * Runtime configuration, read once from the environment and validated with zod.
 * Every size is in bytes or characters as named; every duration is in milliseconds.
 */
const EnvSchema = z.object({
  AGENT_REACH_WORKSPACE: z.string().min(1).default("./workspace"),
  AGENT_REACH_ALLOW_UNSAFE_ROOT: z.enum(["0", "1", "true", "false"]).default("0"),
  AGENT_REACH_DATA_DIR: z.string().min(1).default("./data"),
  DATABASE_URL: z.string().min(1).optional(),
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  AGENT_REACH_HOST_ID: z.string().min(1).optional(),
  AGENT_REACH_LOG: z.string().min(1).optional(),
  AGENT_REACH_PUBLIC_URL: z.string().url().optional(),
  AGENT_REACH_ALLOWED_HOSTS: z.string().default(""),
  AGENT_REACH_READ_MAX_CHARS: z.coerce.number().int().min(200).max(1_000_000).default(12_000),
  AGENT_REACH_SEARCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  AGENT_REACH_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(16 * 1024 * 1024),
  // Legacy encoding of the workspace's non-UTF-8 files (lib/workspace/encoding.ts); unset = detect.
  AGENT_REACH_LEGACY_ENCODING: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === "" ? null : v.trim()))
    .refine((v) => v === null || (canonicalEncoding(v) !== null && !isUnicode(canonicalEncoding(v)!)), {
      message: `a legacy encoding, one of ${SUPPORTED_ENCODINGS.filter((e) => !e.startsWith("utf-")).join(", ")} (common spellings such as GBK, cp936, Shift_JIS, cp1252 also work)`,
    }),
  AGENT_REACH_APPROVAL_WAIT_DEFAULT_S: z.coerce.number().min(0).max(3600).default(30),
  AGENT_REACH_APPROVAL_WAIT_MAX_S: z.coerce.number().min(0).max(3600).default(120),
  AGENT_REACH_APPROVAL_EXPIRY_S: z.coerce.number().min(1).default(24 * 3600),
  AGENT_REACH_RETENTION_DAYS: z.coerce.number().min(0).default(0),
  // run_command limits (lib/exec/limits.ts); unset = the built-in default, 0 = no limit.
  AGENT_REACH_CMD_CPU_SECONDS: z.coerce.number().int().min(0).max(86_400).optional(),
  AGENT_REACH_CMD_MEMORY_MB: z.coerce.number().int().min(0).optional().refine((v) => v === undefined || v === 0 || v >= 16, "0 (no limit) or at least 16"),
  AGENT_REACH_CMD_PROCESSES: z.coerce.number().int().min(0).optional().refine((v) => v === undefined || v === 0 || v >= 8, "0 (no limit) or at least 8"),
  AGENT_REACH_CMD_FILE_SIZE_MB: z.coerce.number().int().min(0).optional(),
  AGENT_REACH_CMD_ADDRESS_SPACE_MB: z.coerce.number().int().min(0).optional(),
  AGENT_REACH_CMD_TIMEOUT_MAX_MS: z.coerce.number().int().min(1).max(MAX_TIMEOUT_MS).optional(),
  AGENT_REACH_CMD_OUTPUT_MAX_CHARS: z.coerce.number().int().min(200).max(MAX_OUTPUT_CHARS).optional(),
  AGENT_REACH_CMD_NICE: z.coerce.number().int().min(0).max(19).default(10),
  AGENT_REACH_CMD_CGROUP: z.enum(["auto", "off"]).default("auto"),
  // The command sandbox (lib/exec/sandbox.ts).
  AGENT_REACH_SANDBOX: z.enum(["auto", "off"]).default("auto"),
  AGENT_REACH_DEFAULT_PRESET: z.enum(PRESET_NAMES).default(DEFAULT_PRESET),
  AGENT_REACH_BWRAP: z.string().min(1).optional(),
  AGENT_REACH_SANDBOX_READONLY: z.string().optional(),
  AGENT_REACH_SANDBOX_EXPOSE: z.string().optional(),
  AGENT_REACH_SANDBOX_SCAN_MAX_ENTRIES: z.coerce.number().int().min(1000).default(250_000),
  AGENT_REACH_MAX_CONCURRENT_COMMANDS: z.coerce.number().int().min(1).max(1024).optional(),
  // Health check's disk threshold (lib/health.ts): an absolute floor in MiB, or a share of the file system.
  AGENT_REACH_HEALTH_MIN_FREE_MB: z.coerce.number().min(0).optional(),
  AGENT_REACH_HEALTH_MIN_FREE_PERCENT: z.coerce.number().min(0).max(100).optional(),
});

export interface Config {
  /** Workspace root as configured (absolute, not yet realpath'd). */
  workspaceRoot: string;
  /** When true, `/` or the home directory may be a workspace root. */
  allowUnsafeRoot: boolean;
  /** Directory holding the SQLite file and other state. */
  dataDir: string;
  /** `file:…` (SQLite) or `postgres://…`. */
  databaseUrl: string;
  host: string;
  port: number;
  /** Identifies this gateway instance; workspaces are owned by one host id. */
  hostId: string;
  /** When set, every call is also appended to this file as one redacted JSON line. */
  logFile: string | null;
  /** Base URL used in links (status URLs, webhooks). */
  publicUrl: string;
  /**
   * Extra names (or `name:port`) a request's Host and Origin may carry besides loopback and the
   * public URL's host (AGENT_REACH_ALLOWED_HOSTS, comma-separated; lib/http/host-check.ts).
   */
  allowedHosts: string[];
  /** Default per-call character cap of read_file (characters, i.e. UTF-16 code units). */
  readMaxChars: number;
  /** Largest accepted request body (bytes). */
  maxBodyBytes: number;
  /**
   * Canonical name of the workspace's legacy encoding ("gb18030", "shift_jis", "windows-1252", …):
   * files that are not valid UTF-8 and decode exactly in it are read and written in it, whatever
   * the detector guesses. Null: detect.
   */
  legacyEncoding: string | null;
  /** Time budget of search_files' matching (ms, worker thread); past it the call answers regex_timeout. */
  searchTimeoutMs: number;
  /** Default wait for a decision when a call asks (ms), used when the agent sends no `Prefer: wait`. */
  approvalWaitDefaultMs: number;
  /** Upper bound on any wait for a decision (ms). */
  approvalWaitMaxMs: number;
  /** A pending call not decided within this time expires (ms). */
  approvalExpiryMs: number;
  /** Calls, events, backups and blobs older than this many days are pruned (0: keep everything). */
  retentionDays: number;
  /** run_command's resource limits before policy rules apply (lib/exec/limits.ts; null = no limit). */
  commandLimits: CommandLimits;
  /** Scheduling niceness of commands (0–19; 0 = same as the gateway), so the gateway keeps the CPU it needs. */
  commandNice: number;
  /** "auto": contain commands in cgroups when this machine allows it (lib/exec/cgroup.ts); "off": rlimits only. */
  commandCgroup: "auto" | "off";
  /** "auto": every command runs in a bubblewrap sandbox (fail closed when it cannot); "off": the operator's explicit opt-out. */
  sandbox: "auto" | "off";
  /** The bwrap executable: AGENT_REACH_BWRAP, else `bwrap` on PATH (null when not found). */
  bwrapPath: string | null;
  /**
   * Workspace-relative paths (globs allowed) that stay read-only inside the sandbox besides
   * `.git/hooks` and `.git/config` (AGENT_REACH_SANDBOX_READONLY, comma-separated).
   */
  sandboxReadOnly: string[];
  /**
   * Workspace-relative globs (picomatch, dot files included) of secret paths the sandbox shows as
   * they are instead of empty (AGENT_REACH_SANDBOX_EXPOSE, comma-separated; default: none, every
   * secret is masked). For projects whose tests need a real `.env.test`, say.
   */
  sandboxExpose: string[];
  /**
   * Most entries (files, directories, links) of a workspace the sandbox scans for secret paths
   * before a command (AGENT_REACH_SANDBOX_SCAN_MAX_ENTRIES, default 250,000; `.git` and
   * `node_modules` are not scanned). A larger workspace fails closed: commands do not start.
   */
  sandboxScanMaxEntries: number;
  /** Commands that may run at once; more wait their turn (default: the number of cores). */
  maxConcurrentCommands: number;
  /**
   * The supervision preset a workspace gets when it is first registered (AGENT_REACH_DEFAULT_PRESET,
   * default "balanced"; lib/policy/presets.ts). The dashboard changes a workspace's preset later.
   */
  defaultPreset: PresetName;
  /**
   * Free space below which the health check's disk check fails: `{mb}` (AGENT_REACH_HEALTH_MIN_FREE_MB),
   * `{percent}` of the file system (AGENT_REACH_HEALTH_MIN_FREE_PERCENT), or null for the default
   * (lib/health.ts `diskThresholdBytes`). 0 turns the check off.
   */
  healthMinFree: { mb: number } | { percent: number } | null;
}

/**
 * Parses configuration from `env` (default `process.env`). Throws a readable Error for invalid
 * values (a startup error, not a tool error).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`Invalid configuration: ${issues}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.AGENT_REACH_DATA_DIR);
  const host = e.HOST;
  const port = e.PORT;
  return {
    workspaceRoot: path.resolve(e.AGENT_REACH_WORKSPACE),
    allowUnsafeRoot: e.AGENT_REACH_ALLOW_UNSAFE_ROOT === "1" || e.AGENT_REACH_ALLOW_UNSAFE_ROOT === "true",
    dataDir,
    databaseUrl: e.DATABASE_URL ?? `file:${path.join(dataDir, "agent-reach.db")}`,
    host,
    port,
    hostId: e.AGENT_REACH_HOST_ID ?? os.hostname(),
    logFile: e.AGENT_REACH_LOG ? path.resolve(e.AGENT_REACH_LOG) : null,
    publicUrl: e.AGENT_REACH_PUBLIC_URL ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    allowedHosts: e.AGENT_REACH_ALLOWED_HOSTS.split(",").map((h) => h.trim()).filter(Boolean),
    readMaxChars: e.AGENT_REACH_READ_MAX_CHARS,
    maxBodyBytes: e.AGENT_REACH_MAX_BODY_BYTES,
    legacyEncoding: e.AGENT_REACH_LEGACY_ENCODING === null ? null : canonicalEncoding(e.AGENT_REACH_LEGACY_ENCODING),
    searchTimeoutMs: e.AGENT_REACH_SEARCH_TIMEOUT_MS,
    approvalWaitDefaultMs: e.AGENT_REACH_APPROVAL_WAIT_DEFAULT_S * 1000,
    approvalWaitMaxMs: e.AGENT_REACH_APPROVAL_WAIT_MAX_S * 1000,
    approvalExpiryMs: e.AGENT_REACH_APPROVAL_EXPIRY_S * 1000,
    retentionDays: e.AGENT_REACH_RETENTION_DAYS,
    commandLimits: commandLimitsFrom(e),
    commandNice: e.AGENT_REACH_CMD_NICE,
    commandCgroup: e.AGENT_REACH_CMD_CGROUP,
    sandbox: e.AGENT_REACH_SANDBOX,
    bwrapPath: e.AGENT_REACH_BWRAP ? path.resolve(e.AGENT_REACH_BWRAP) : findOnPath("bwrap", env.PATH ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
    sandboxReadOnly: readOnlyList(e.AGENT_REACH_SANDBOX_READONLY),
    sandboxExpose: exposeList(e.AGENT_REACH_SANDBOX_EXPOSE),
    sandboxScanMaxEntries: e.AGENT_REACH_SANDBOX_SCAN_MAX_ENTRIES,
    maxConcurrentCommands: e.AGENT_REACH_MAX_CONCURRENT_COMMANDS ?? Math.max(1, os.availableParallelism()),
    defaultPreset: e.AGENT_REACH_DEFAULT_PRESET,
    healthMinFree:
      e.AGENT_REACH_HEALTH_MIN_FREE_MB !== undefined
        ? { mb: e.AGENT_REACH_HEALTH_MIN_FREE_MB }
        : e.AGENT_REACH_HEALTH_MIN_FREE_PERCENT !== undefined
          ? { percent: e.AGENT_REACH_HEALTH_MIN_FREE_PERCENT }
          : null,
  };
}

/** The built-in command limits with every AGENT_REACH_CMD_* that is set applied (0 = no limit). */
function commandLimitsFrom(e: z.infer<typeof EnvSchema>): CommandLimits {
  return withRuleLimits(defaultCommandLimits(), {
    cpu_seconds: e.AGENT_REACH_CMD_CPU_SECONDS,
    memory_mb: e.AGENT_REACH_CMD_MEMORY_MB,
    processes: e.AGENT_REACH_CMD_PROCESSES,
    file_size_mb: e.AGENT_REACH_CMD_FILE_SIZE_MB,
    address_space_mb: e.AGENT_REACH_CMD_ADDRESS_SPACE_MB,
    timeout_ms: e.AGENT_REACH_CMD_TIMEOUT_MAX_MS,
    output_chars: e.AGENT_REACH_CMD_OUTPUT_MAX_CHARS,
  });
}

/** A comma-separated list of workspace-relative paths, each trimmed, without `./` or trailing `/`. */
function pathList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim().replace(/^\.\//, "").replace(/\/+$/, ""))
    .filter(Boolean);
}

/**
 * AGENT_REACH_SANDBOX_READONLY: comma-separated workspace-relative paths or globs. Each must be
 * relative, without `..`, and start with a literal name (the part before the first wildcard is
 * what the sandbox makes read-only, so `*.sh` would mean the whole workspace).
 */
function readOnlyList(value: string | undefined): string[] {
  const entries = pathList(value);
  for (const entry of entries) {
    const segments = entry.split("/");
    if (path.isAbsolute(entry) || segments.includes("..") || segments.includes(".") || /[*?[\]{}!]/.test(segments[0])) {
      throw new Error(`Invalid configuration: AGENT_REACH_SANDBOX_READONLY: "${entry}" must be a workspace-relative path starting with a literal name (e.g. ".github/workflows/**", "Makefile")`);
    }
  }
  return entries;
}

/**
 * AGENT_REACH_SANDBOX_EXPOSE: comma-separated workspace-relative globs (e.g. `.env.test`,
 * `**\/fixtures/*.pem`). Each must be relative and without `..`; picomatch must accept it.
 */
function exposeList(value: string | undefined): string[] {
  const entries = pathList(value);
  for (const entry of entries) {
    const segments = entry.split("/");
    let valid = !path.isAbsolute(entry) && !segments.includes("..") && !segments.includes(".");
    try {
      picomatch.makeRe(entry, { dot: true });
    } catch {
      valid = false;
    }
    if (!valid) throw new Error(`Invalid configuration: AGENT_REACH_SANDBOX_EXPOSE: "${entry}" must be a workspace-relative glob (e.g. ".env.test", "**/fixtures/*.pem")`);
  }
  return entries;
}

/** The first executable `name` on a PATH value (absolute entries only), or null. */
function findOnPath(name: string, pathValue: string | undefined): string | null {
  for (const dir of (pathValue ?? "").split(":")) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

let cached: Config | null = null;

/** The process-wide configuration (parsed on first use). */
export function getConfig(): Config {
  cached ??= loadConfig();
  return cached;
}

/**
 * Replaces the process-wide configuration (in-process gateways and tests: lib/gateway/index.ts).
 * Pass null to parse the environment again on next use.
 */
export function useConfig(config: Config | null): void {
  cached = config;
}
