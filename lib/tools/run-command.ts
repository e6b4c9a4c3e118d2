import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { buildChildEnv, ensureChildHome } from "@/lib/exec/child-env";
import { MAX_OUTPUT_CHARS, MAX_TIMEOUT_MS, withRuleLimits } from "@/lib/exec/limits";
import { runCommand, type RunResult } from "@/lib/exec/run-command";
import { sandboxStatus } from "@/lib/exec/sandbox";
import { appendEvent } from "@/lib/audit/events";
import { MAX_PARSE_CHARS } from "@/lib/policy/shell-parse";
import { defineTool } from "@/lib/tools/define-tool";
import { resolveInWorkspace } from "@/lib/workspace/fence";
import { MASKED_OUTPUT_NOTE } from "@/lib/redact";
import { describe as describeChanges, runWithEffects } from "@/lib/effects/command-effects";
import { heldNote } from "@/lib/effects/call-hooks";
import type { ChangesSummary } from "@/lib/effects/stage";

/** Default wall-clock limit (ms); the largest is MAX_TIMEOUT_MS. */
const DEFAULT_TIMEOUT_MS = 120_000;
/** Default and smallest output cap (characters of stdout + stderr); the largest is MAX_OUTPUT_CHARS. */
const DEFAULT_MAX_OUTPUT_CHARS = 30_000;
const MIN_MAX_OUTPUT_CHARS = 200;

/** Arguments of run_command. */
export const RunCommandInput = z
  .object({
    command: z
      .string()
      .min(1)
      .max(MAX_PARSE_CHARS)
      .refine((s) => !s.includes("\u0000"), "The command contains a NUL byte.")
      .describe('The command line, run as `bash -c` (e.g. "npm test -- --run", "git log -5 --oneline"). Chains, pipes and redirections are allowed; every part is checked by the policy.'),
    cwd: z
      .string()
      .optional()
      .describe('Working directory: relative to the workspace root (default: the root), or an absolute path inside it. Must be a directory.'),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .max(MAX_TIMEOUT_MS)
      .default(DEFAULT_TIMEOUT_MS)
      .describe(`Wall-clock limit in milliseconds (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS}); the command and everything it started are stopped when it passes.`),
    max_output_chars: z
      .number()
      .int()
      .min(MIN_MAX_OUTPUT_CHARS)
      .max(MAX_OUTPUT_CHARS)
      .default(DEFAULT_MAX_OUTPUT_CHARS)
      .describe(`Characters of stdout + stderr returned (default ${DEFAULT_MAX_OUTPUT_CHARS}); longer output keeps its beginning and end, with a marker saying how many bytes were left out.`),
    network: z
      .boolean()
      .default(false)
      .describe("Ask for network access inside the sandbox (it has none by default: no internet, not even localhost). A reviewer must approve every call that asks; use it only for what needs it, e.g. installing packages."),
  })
  .strict();

/** The `data` of a finished run_command call. */
export interface RunCommandOutput extends RunResult {
  command: string;
  /** Canonical workspace-relative working directory ("." for the root). */
  cwd: string;
  /** What the command changed in the workspace (lib/effects), or null when it was not captured. */
  changes: ChangesSummary | null;
  /** Why changes are null, or what to do while they are held. */
  changes_note?: string;
}

/** JSON Schema source of run_command's `data`. */
const RunCommandOutputSchema = z.looseObject({
  command: z.string(),
  cwd: z.string(),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  timed_out: z.boolean(),
  aborted: z.boolean(),
  limit: z.string().nullable().describe("The limit that stopped the command (memory, cpu, processes, file_size, time), or null."),
  limits: z.looseObject({
    cpu_seconds: z.number().nullable(),
    memory_bytes: z.number().nullable(),
    processes: z.number().nullable(),
    file_size_bytes: z.number().nullable(),
    address_space_bytes: z.number().nullable(),
    timeout_ms: z.number(),
    max_output_chars: z.number(),
  }),
  duration_ms: z.number(),
  stdout: z.string(),
  stderr: z.string(),
  truncated: z.boolean(),
  original_length: z.looseObject({ stdout: z.number().int(), stderr: z.number().int() }),
});

/**
 * run_command: runs a program in the workspace (docs/field-cases.md C20, C21, C23).
 * The gateway has already fenced `cwd` and asked the policy (lib/policy/decide.ts); `run` fences
 * `cwd` again (it runs later, possibly after an approval) and executes with the same child
 * environment the policy judged (lib/exec/child-env.ts), under the resource limits of the
 * configuration with the matching rules' `limits` over them (lib/exec/limits.ts). The
 * call's `timeout_ms` and `max_output_chars` are lowered to those limits' ceilings when above.
 */
export const runCommandTool = defineTool({
  name: "run_command",
  title: "Run command",
  description: [
    "Run a program in the workspace with bash -c and get its exit code and output. Use it only to run programs: tests, builds, linters, formatters, package managers, git, project scripts.",
    "Do not use it to read or change files: use read_file instead of cat/head/tail, edit_file or write_file instead of sed -i, echo > file, tee or heredocs, list_directory instead of ls/find, search_files instead of grep. Shell writes skip the diff and backup a reviewer relies on.",
    "Supervision depends on the workspace's preset. strict: read-only commands (ls, cat, grep, rg, find without -exec/-delete, git status/diff/log/show, …) run at once and anything else waits for a reviewer's approval. balanced (the default) and autonomous: commands run in the sandbox at once, and wait for a reviewer only to leave it (network: true, a path outside the workspace, reading a secret such as .env, no sandbox available); their risky file changes are held (see below). Under every preset writing outside the workspace is refused, deny rules refuse, and every part of a chain, pipe or substitution is checked. A call that waits answers approval_pending (601) with a call_id: do not resend it, poll get_call.",
    "stdin is closed (no prompts; pass flags like --yes); the environment is minimal and holds no credentials; HOME is a private directory that starts fresh each command except its caches and package stores (~/.cache, ~/.npm, ~/.local for pip --user, cargo and Go caches) and the identity keys of git config --global (user.name, user.email, …); background jobs are stopped when the command ends.",
    "Commands run in a sandbox: the workspace is writable, the system read-only, /tmp private; nothing else of the machine is visible, there is no network unless you pass network: true (which a reviewer must approve), and .git/hooks and .git/config are read-only (git's configuration shows without credentials: no tokens in remote URLs, no extraheader or credential helpers). Files whose names are not valid UTF-8 read as empty. The workspace's secrets (.env, .env.local, key files, .ssh, .aws, …) read as empty read-only files in the box, however they are read; .env.example and other templates read as they are. sandbox in the result says how it ran (sandbox.masked lists the secrets shown empty).",
    "Output is capped at max_output_chars: when truncated is true the middle was cut and original_length gives the full size in bytes; rerun with a narrower command (| tail -50, | grep error) rather than the same one.",
    "Limits: memory and number of processes for the whole command, CPU time per process, largest file written, and timeout_ms. When one stops the command, limit names it (memory, cpu, processes, file_size, time) and limits lists the values it ran under; make the command lighter (fewer parallel jobs, smaller input) instead of retrying it unchanged.",
    "File changes: the command runs on a copy-on-write view of the workspace; what it created, modified and deleted comes back in changes (counts, bytes, files) and is applied to the workspace with a backup of every replaced file (revert_call undoes it). A failed or timed-out command's changes are applied as a shell would have left them. A risky change set (many files deleted or emptied, secrets, .git internals, Python bytecode such as __pycache__/*.pyc, hooks, files that run later such as CI workflows, Makefile, package.json, .envrc or shell rc files, such a file staged or committed in git with content other than the working tree's, a skip-worktree or assume-unchanged flag, or a rule's review_effects) is held under every preset; what a command does to git's index and refs is listed in changes.git. Under strict, a read-only command that changed files is held too: changes.status is \"held\", the workspace is untouched, and get_call with the call_id tells you once a reviewer applied (\"applied\") or rejected (\"discarded\") it.",
    MASKED_OUTPUT_NOTE,
  ].join("\n"),
  input: RunCommandInput,
  risk: "exec",
  changes: "change_set",
  grant: "command",
  output: RunCommandOutputSchema,
  subject: (args) => ({
    command: { command: args.command, ...(args.cwd !== undefined && { cwd: args.cwd }), ...(args.network && { grants: { network: true } }) },
  }),
  async run(args, ctx): Promise<RunCommandOutput> {
    ctx.note({ target: args.command, ...(args.cwd !== undefined && { pathRaw: args.cwd }) });
    const cwd = await resolveInWorkspace(ctx.workspace, args.cwd ?? ".");
    ctx.note({ pathResolved: cwd.absolute });
    if (cwd.kind !== "directory") {
      if (!cwd.exists) throw new ToolError("not_found", `cwd does not exist: ${cwd.relative}`, { cwd: args.cwd ?? "." });
      throw new ToolError("invalid_arguments", `cwd is not a directory: ${cwd.relative}`, { cwd: args.cwd ?? "." });
    }
    const env = buildChildEnv(ctx.workspace.root);
    await ensureChildHome(env);
    const { timeoutMs, outputChars, ...limits } = withRuleLimits(ctx.config.commandLimits, ctx.ruleOptions?.limits);
    // The box is the same for every call, approved or not; only an explicit grant widens it: the
    // call's own `network: true` (which always asks a reviewer) or a matching rule's `network`.
    const box = sandboxStatus();
    const network = args.network || ctx.ruleOptions?.network === true;
    const commandData = { command: args.command, cwd: cwd.relative || "." };
    // The command runs on an overlay view of the workspace (inside the box when there is one),
    // and its change set is applied or held by lib/effects.
    const effects = await runWithEffects(ctx, {
      command: args.command,
      cwdAbs: cwd.absolute,
      commandData,
      boxed: box.available,
      run: (capture, commandLine) =>
        runCommand({
          command: commandLine,
          cwd: cwd.absolute,
          timeoutMs: Math.min(args.timeout_ms, timeoutMs),
          maxOutputChars: Math.min(args.max_output_chars, outputChars),
          env,
          signal: ctx.signal,
          limits,
          nice: ctx.config.commandNice,
          cgroups: ctx.config.commandCgroup,
          ...(box.available && { sandbox: { workspaceRoot: ctx.workspace.root, home: env.HOME ?? null, network, ...(ctx.policyRules && { secretRules: ctx.policyRules }) } }),
          ...(capture && { capture }),
          maxConcurrent: ctx.config.maxConcurrentCommands,
          onQueued: (ahead) => {
            void appendEvent({
              type: "command.queued",
              callId: ctx.callId,
              actor: "system",
              data: { ahead, max_concurrent: ctx.config.maxConcurrentCommands },
            }).catch(() => {});
          },
        }),
    });
    const { result, changes } = effects;
    if (!result.sandbox.boxed) {
      // An unboxed run says so, in the result and on the record.
      result.sandbox.unboxed_reason = box.mode === "off" ? "the operator turned the sandbox off (AGENT_REACH_SANDBOX=off)" : `the sandbox is unavailable: ${box.problems.join("; ")}`;
      result.sandbox.network = true;
    }
    ctx.note({
      truncated: result.truncated,
      bytesOut: result.original_length.stdout + result.original_length.stderr,
      ...(changes?.status !== "held" && { summary: `${summary(result)}${changes && changes.total_files > 0 ? `; ${describeChanges(changes)}` : ""}` }),
    });
    return {
      ...commandData,
      ...result,
      changes,
      ...(effects.captureNote && { changes_note: effects.captureNote }),
      ...(changes?.status === "held" && {
        changes_note: heldNote(changes),
      }),
    };
  },
});

function summary(r: RunResult): string {
  const how = r.timed_out ? "timed out" : r.aborted ? "aborted" : r.limit ? `stopped by limit ${r.limit}` : r.signal ? `killed by ${r.signal}` : `exit ${r.exit_code}`;
  const box = r.sandbox.boxed ? (r.sandbox.network ? "boxed, with network" : "boxed") : "UNBOXED";
  return `${how} after ${r.duration_ms} ms (${box}${r.queued_ms > 0 ? `; waited ${r.queued_ms} ms for a slot` : ""})`;
}
