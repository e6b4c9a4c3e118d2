import type { RuleLimits } from "@/lib/exec/limits";

/**
 * Types shared by the policy engine (lib/policy), the gateway and the dashboard.
 * Decisions: deny beats ask beats allow (lib/policy/decide.ts).
 */

export type Decision = "allow" | "ask" | "deny";

/** A supervision preset's name (lib/policy/presets.ts holds the presets themselves). */
export type PresetName = "strict" | "balanced" | "autonomous";

/** How risky a tool is (lib/tools/define-tool.ts `risk`); the default policy and the MCP annotations derive from it. */
export type ToolRisk = "read" | "write" | "exec" | "network";

/** One ordered rule, as stored in the PolicyRule table. */
export interface PolicyRuleData {
  id: string;
  /** Lower runs first. */
  priority: number;
  /** Tool name, or "*" for every tool. */
  tool: string;
  /** picomatch glob on the workspace-relative path ("/"-separated, no leading "./"), or null. */
  pathGlob: string | null;
  /** Command pattern for run_command ("git log *": words match whole tokens), or null. */
  command: string | null;
  decision: Decision;
  note: string | null;
  enabled: boolean;
  /** Settings besides the decision (PolicyRule.optionsJson), or null/absent for none. */
  options?: RuleOptions | null;
  /** Where the rule comes from: "default", "operator" or "grant" (absent: operator). */
  source?: string;
  /** The only workspace the rule holds in (a grant's scope); null/absent: every workspace. */
  workspaceId?: string | null;
  /** The only session the rule holds in (a grant's scope); null/absent: every session. */
  sessionId?: string | null;
  /** When the rule stops holding (ms since the epoch); null/absent: never. */
  expiresAt?: number | null;
}

/**
 * Settings a rule carries besides its decision; they apply to the calls the rule matches, whatever
 * the decision (see lib/policy/decide.ts for how several matching rules combine).
 */
export interface RuleOptions {
  /** run_command resource limits for the commands this rule matches (lib/exec/limits.ts). */
  limits?: RuleLimits;
  /**
   * false: what the tool returns for the paths (or commands) this rule matches reaches the agent
   * without secret masking, and reviewers may reveal masked values of such calls after an
   * explicit click (lib/redact/reveal.ts). Default true (lib/redact.ts).
   */
  redact?: boolean;
  /**
   * true: the command runs in its box at once, and its file changes (the change set) wait for a
   * reviewer, who approves the effect (the diff) rather than the command line (lib/effects).
   */
  review_effects?: boolean;
  /**
   * true: commands this rule matches run in the sandbox with the host's network (the box has
   * none otherwise). Recorded on each call it applies to (RunResult.sandbox.network).
   */
  network?: boolean;
}

/** What the policy is asked about one call. */
export interface PolicyInput {
  tool: string;
  risk: ToolRisk;
  /** The workspace the call reaches: rules scoped to another workspace do not apply. */
  workspaceId?: string;
  /** The session the call belongs to: rules scoped to another session do not apply. */
  sessionId?: string;
  /** The time the call is decided at (ms since the epoch; default now): expired rules do not apply. */
  now?: number;
  /**
   * The canonical workspace root, for checks the policy makes on the files a path tool names
   * (hard-linked files, see docs/SECURITY.md "Hard links"). Absent: those checks are skipped.
   */
  workspaceRoot?: string;
  /** Fenced, workspace-relative paths the call touches ("" is the root). */
  paths: string[];
  /**
   * Those of `paths` that are other names of the same files, not their canonical paths: the path
   * as written through a symlink, and the names workspace links give a file a tool changes. They
   * can only make a verdict stricter: an allow rule counts for the canonical paths alone, so a
   * link never widens what the policy allows.
   */
  otherNames?: string[];
  /**
   * For run_command: the command string and the fenced absolute cwd. `envUnknown`: the command runs
   * with an environment the policy does not know (the hook door), so no variable has a known value
   * (`env` is then only used for the gateway's own lookups, never as the command's environment).
   * `cwdUnknown`: why the directory the command runs in is not known (then `cwd` is only a
   * placeholder, and every relative path and working-directory change asks with this reason).
   */
  command?: { command: string; cwd: string; workspaceRoot: string; env: Record<string, string>; envUnknown?: boolean; cwdUnknown?: string };
  /** For fetch_url. */
  url?: string;
  /**
   * For run_command: true when the command will run inside the sandbox (lib/exec/sandbox.ts).
   * False at the Claude Code hook door (Claude Code runs the command itself), when the sandbox is
   * unavailable, and when the operator turned it off. Absent counts as false (the conservative
   * answer): a command a rule allows then still asks unless the policy models everything it does.
   */
  boxed?: boolean;
  /** For run_command when the sandbox should run but cannot: why (shown on the approval). */
  sandboxProblem?: string;
  /** What the call asks beyond the sandbox's defaults; every grant is shown to the reviewer. */
  grants?: SandboxGrants;
  /**
   * The supervision preset the call is judged under (lib/policy/presets.ts); absent: "strict".
   * The rules passed to `decide` must already be the preset's (`rulesForPreset`); the preset here
   * turns on its built-in checks and is named in the verdict.
   */
  preset?: PresetName;
  /**
   * For run_command: the command's file changes are captured (backed up, revertible, held when
   * risky; lib/effects), so its writes inside the workspace need not ask under a relaxed preset.
   */
  captured?: boolean;
  /**
   * For write_file, edit_file and restore_backup: the change as its preview computed it, for the
   * large-change check of a preset (absent: not checked).
   */
  change?: FileChangeFacts;
}

/** A planned change to one file, as the policy's large-change check needs it. */
export interface FileChangeFacts {
  /** Workspace-relative path. */
  path: string;
  /** The file now: lines and bytes (0 and 0 when it does not exist). */
  before: { lines: number; bytes: number };
  /** Lines the change removes (the diff's deletions). */
  deletions: number;
  /** Size after the change (bytes). */
  afterBytes: number;
}

/** Widenings of the sandbox a call asks for (run_command `network: true`). */
export interface SandboxGrants {
  /** The host's network instead of none. */
  network?: boolean;
}

/** The rule that decided (or null when a built-in fallback decided), for display and audit. */
export interface RuleRef {
  id: string;
  note: string | null;
  /**
   * Where the rule comes from: "default" (seeded, `default:…`), "preset" (a supervision preset's
   * own rule or check, `preset:<name>:…`), or "operator" (written by a person; also grants).
   */
  source?: "default" | "preset" | "operator" | "grant";
}

/** One simple command found in a shell command line, with its own decision. */
export interface CommandPart {
  /** The simple command's text as written. */
  text: string;
  /** argv words after quote removal, when they could be determined statically. */
  argv: string[] | null;
  decision: Decision;
  rule: RuleRef | null;
  /** Why, in words a reviewer reads ("not on the read-only list", "write_outside_workspace: ~/.bashrc"). */
  reason: string;
}

/** What kind of danger a call carries (shown first to the reviewer). */
export type RiskKind =
  | "network_egress"
  | "reads_secret"
  | "writes_outside_workspace"
  | "deletes"
  | "runs_workspace_code"
  | "leaves_sandbox"
  | "irreversible"
  | "large_change";

/** One named danger: its kind and a short sentence a person reads at a glance. */
export interface RiskLabel {
  kind: RiskKind;
  text: string;
}

/** The policy's answer. */
export interface PolicyVerdict {
  decision: Decision;
  /** The rule that decided the whole call. */
  rule: RuleRef | null;
  /** Short reasons, most important first; also shown to the agent on deny/ask. */
  reasons: string[];
  /** For shell commands: every simple command with its own decision. */
  parts?: CommandPart[];
  /** The options of the matching rules, combined; absent when no matching rule has any. */
  options?: RuleOptions;
  /** The dangers the policy sees in the call, most serious first (may be empty). */
  risks?: RiskLabel[];
  /** The supervision preset the call was judged under (lib/policy/presets.ts). */
  preset?: PresetName;
}
