import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import type { Decision, PolicyRuleData, PresetName } from "@/lib/policy/types";

/**
 * Supervision presets: how much a person is asked, chosen per workspace and per agent token.
 *
 * A preset is a readable table of rules plus a few named built-in checks, both shown on the policy
 * page. Every preset starts from the stored rule table (the seeded defaults, which the operator
 * may have edited, and the operator's own rules) and replaces a few default rules with its own:
 *
 * - `strict`: the stored table as it is. Every write, edit, restore and every command that is not
 *   on the read-only list asks.
 * - `balanced` (the default): reads are allowed (sensitive files still ask); write_file, edit_file
 *   and restore_backup apply at once, since each is backed up, diffed and revertible, except on
 *   risky paths (`RUNS_LATER_PATHS`: files that run later with the person's rights or change how
 *   things run) and except large deletions or rewrites (`LARGE_CHANGE`), which ask. run_command
 *   runs in the sandbox without asking; it still asks when it would leave the box (network, a
 *   path outside the workspace, no sandbox) and its change set is held when it trips a hold
 *   threshold (lib/effects/stage.ts). fetch_url asks unless a rule allows it.
 * - `autonomous`: like balanced without the large-change checks: only leaving the box (the network,
 *   paths outside, unboxed commands, files that run later outside the box) and sensitive files
 *   ask, and deny rules refuse; a command deleting many files is not held (each deleted file is
 *   backed up). Everything is still recorded, backed up and revertible.
 *
 * Operator rules apply on top of every preset: among matching rules deny beats ask beats allow, so
 * an operator's deny or ask always wins, and an operator's allow relaxes only where the preset
 * itself allows (a preset ask still asks). The sensitive-path rules and the policy's built-in
 * checks (writes outside the workspace, unclassifiable commands, hard links, untrusted
 * repositories) hold under every preset. Approval never widens the sandbox.
 */

/** The presets, least permissive first. */
export const PRESET_NAMES = ["strict", "balanced", "autonomous"] as const satisfies readonly PresetName[];

// A preset's name is a policy type (lib/policy/types.ts), re-exported here with the presets.
export type { PresetName };

/** The preset of a workspace nobody chose one for (AGENT_REACH_DEFAULT_PRESET overrides it). */
export const DEFAULT_PRESET: PresetName = "balanced";

/** True when `value` names a preset. */
export function isPresetName(value: unknown): value is PresetName {
  return typeof value === "string" && (PRESET_NAMES as readonly string[]).includes(value);
}

/**
 * Files that run later, with the rights of whoever triggers them and outside the sandbox, or that
 * change how things run: CI configurations, git hook managers, build files, package scripts,
 * direnv, editor task and launch files, shell start-up files. Globs are picomatch (`dot: true`),
 * matched against canonical workspace-relative paths; matching is case-sensitive, as Linux file
 * names are (`.GitHub/workflows` is not the directory GitHub reads). Repository internals
 * (`.git/hooks`, `.git/config`, …) are covered by the sensitive-path rules and by the git checks
 * (lib/effects/git-danger.ts, `insideGitDirectory` in decide.ts), so they are not listed here.
 *
 * One list serves both halves: the balanced and autonomous presets ask before write_file,
 * edit_file or restore_backup change a matching file, and a command's change set that touches
 * one is held for a reviewer (lib/effects/stage.ts).
 */
export const RUNS_LATER_PATHS: ReadonlyArray<readonly [id: string, glob: string, note: string]> = [
  ["github-workflows", "**/.github/workflows/**", "GitHub Actions workflows run in CI with the repository's secrets"],
  ["github-actions", "**/.github/actions/**", "local GitHub Actions run in CI"],
  ["gitlab-ci", "**/{.gitlab-ci.yml,.gitlab-ci.yaml,.gitlab-ci/**}", "GitLab CI configuration"],
  ["circleci", "**/.circleci/**", "CircleCI configuration"],
  ["azure-pipelines", "**/{azure-pipelines*.yml,azure-pipelines*.yaml,.azure-pipelines/**}", "Azure Pipelines configuration"],
  ["jenkins", "**/Jenkinsfile*", "Jenkins pipelines"],
  ["other-ci", "**/{.travis.yml,.drone.yml,bitbucket-pipelines.yml,.buildkite/**,.woodpecker/**,.woodpecker.yml,appveyor.yml,.appveyor.yml,cloudbuild.yaml,.cirrus.yml}", "CI configuration"],
  ["git-hook-managers", "**/{.husky/**,.githooks/**,.git-hooks/**,.hooks/**,.pre-commit-config.yaml,lefthook.yml,.lefthook.yml,.lintstagedrc*,lint-staged.config.*}", "git hooks installed by a hook manager run on the next commit"],
  ["git-files", "**/{.gitattributes,.gitmodules,.gitconfig,.lfsconfig}", "git attributes, submodules and config files change what git runs and fetches"],
  ["makefiles", "**/{Makefile,makefile,GNUmakefile,*.mk}", "Makefiles run whatever they name on the next make"],
  ["package-json", "**/package.json", "package scripts (install, test, prepare…) run on the next npm install or npm test"],
  ["package-managers", "**/{.npmrc,.yarnrc,.yarnrc.yml,.yarn/plugins/**,.yarn/releases/**,.pnpmfile.cjs,.pnpmfile.mjs,bunfig.toml,deno.json,deno.jsonc,.cargo/**,build.rs,Cargo.toml,Gemfile,*.gemspec,Rakefile,pom.xml,.mvn/**,build.gradle,build.gradle.kts,settings.gradle,settings.gradle.kts,gradlew,gradle/wrapper/**,CMakeLists.txt,*.cmake,meson.build,BUILD,BUILD.bazel,WORKSPACE,*.bzl}", "package manager and build configuration runs code on the next install or build"],
  ["task-runners", "**/{justfile,Justfile,.justfile,Taskfile.yml,Taskfile.yaml,Taskfile.dist.yml,.mise.toml,mise.toml,.tool-versions,Procfile,Vagrantfile,flake.nix,shell.nix,default.nix,devbox.json,Brewfile,Dockerfile,Dockerfile.*,*.dockerfile,docker-compose*.yml,docker-compose*.yaml,compose.yml,compose.yaml,action.yml,action.yaml}", "task runners, containers and environments run what they name"],
  ["python-hooks", "**/{setup.py,setup.cfg,pyproject.toml,tox.ini,noxfile.py,conftest.py,pytest.ini,sitecustomize.py,usercustomize.py,*.pth}", "Python build files, test plugins and start-up hooks run on the next install, test run or interpreter start"],
  ["tool-configs", "**/{*.config.js,*.config.cjs,*.config.mjs,*.config.ts,*.config.cts,*.config.mts,.eslintrc.js,.eslintrc.cjs,.prettierrc.js,.prettierrc.cjs,.babelrc.js,.mocharc.js,.mocharc.cjs,karma.conf.js,Gruntfile.js,gulpfile.js}", "tool configuration written in code runs when the tool (build, lint, test) starts"],
  ["installed-programs", "**/{node_modules/.bin/**,.venv/bin/**,venv/bin/**,{.venv,venv}/lib/*/site-packages/{*.pth,sitecustomize.py,usercustomize.py}}", "installed programs and start-up hooks run when a package script or the interpreter starts"],
  ["envrc", "**/{.envrc,.env.rc,.envrc.local}", "direnv runs .envrc when anyone enters the directory"],
  [
    "runtime-configs",
    "**/{.pryrc,.irbrc,.gemrc,.rspec,.dir-locals.el,.bazelrc,.bazelversion,WORKSPACE,WORKSPACE.bazel,MODULE.bazel,Jakefile,Jakefile.js,nodemon.json,.nycrc,.nycrc.*,.babelrc,.babelrc.json,babel.config.json,.mocharc.yml,.mocharc.yaml,.mocharc.json,.storybook/**,nx.json,project.json,turbo.json,lerna.json,tsconfig.json,tsconfig.*.json,jsconfig.json,.swcrc,.pythonrc,.pythonstartup,.inputrc}",
    "interpreter start-up files, test-runner, build-tool and compiler configs load code or plugins the next time they run",
  ],
  [
    "agent-instructions",
    "**/{AGENTS.md,CLAUDE.md,CLAUDE.local.md,GEMINI.md,.cursorrules,.windsurfrules,.github/copilot-instructions.md,.github/instructions/**,.junie/**,.kiro/**}",
    "instructions the next coding-agent session reads and follows",
  ],
  ["editor-tasks", "**/{.vscode/**,.idea/**,.zed/**,.helix/**,.fleet/**,*.code-workspace,.nvim.lua,.nvimrc,.exrc,.lvimrc}", "editor settings, tasks and launch files run programs from the editor"],
  ["agent-config", "**/{.claude/**,.mcp.json,.cursor/**,.codex/**,.gemini/**,.windsurf/**,.continue/**,.aider.conf.yml,.roo/**,.clinerules/**,.devcontainer/**,.devcontainer.json}", "coding-agent and dev-container settings: their hooks, MCP servers and commands run outside the sandbox, and they can switch supervision off"],
  ["shell-rc", "**/{.bashrc,.bash_profile,.bash_login,.bash_logout,.bash_aliases,.bashrc.d/**,.profile,.profile.d/**,.zshrc,.zshrc.*,.zshrc.d/**,.zprofile,.zshenv,.zlogin,.zlogout,.kshrc,.cshrc,.tcshrc,.inputrc,.config/fish/**}", "shell start-up files run in every new shell"],
];

/** Just the globs of RUNS_LATER_PATHS. */
export const RUNS_LATER_GLOBS: readonly string[] = RUNS_LATER_PATHS.map(([, glob]) => glob);

/**
 * What counts as a large deletion or rewrite for write_file, edit_file and restore_backup: the
 * file had at least `minLines` lines (or `minBytes` bytes, for files without lines) and the change
 * removes more than `fraction` of them.
 */
export const LARGE_CHANGE = { minLines: 40, minBytes: 4096, fraction: 0.5 } as const;

/** A built-in check of a preset, shown on the policy page beside its rules. */
export interface PresetCheck {
  id: string;
  decision: Decision;
  text: string;
}

/** A preset as the policy page shows it and the policy applies it. */
export interface PresetSpec {
  name: PresetName;
  summary: string;
  /** Default rule ids this preset replaces with its own rules. */
  replaces: readonly string[];
  /** The preset's own rules (ids `preset:<name>:…`). */
  rules: readonly PolicyRuleData[];
  /** Built-in checks beyond the rules. */
  checks: {
    /** A command's writes inside the workspace run without asking when the command is boxed and its changes are captured. */
    boxedWritesApply: boolean;
    /** A recursive read in the box may walk `.git` (hooks and config are read-only there); git config holding a credential still asks. */
    boxedWalksIntoGit: boolean;
    /** Large deletions or rewrites by write_file, edit_file or restore_backup ask. */
    largeChange: boolean;
    /**
     * A command's change set that deletes many files (more than AGENT_REACH_EFFECTS_MAX_DELETIONS,
     * lib/effects/stage.ts) is held for a reviewer; without it, the deletions apply at once, each
     * deleted file backed up and revertible.
     */
    holdLargeDeletions: boolean;
    /**
     * Writes into a git directory found by its shape (a `.git` pointer's target, a bare repository)
     * ask, and so do writes to the paths the person's git configuration runs (lib/policy/git-config-paths.ts).
     */
    gitDirectories: boolean;
  };
  /** The checks in words, for the policy page. */
  describedChecks: readonly PresetCheck[];
}

/** Priority bands of preset rules (the default rules use 10, 100 and 200). */
const RISKY = 20;
const TOOLS = 100;
const SHELL_BOXED = 300;

/**
 * The tools that change a file the call names, in the policy's own words (rules name tools by their
 * wire names). The tool definitions declare the same (ToolDefinition.changes "file"), and a
 * structure test keeps the two equal: the policy sits below the tool registry and cannot read it.
 */
export const FILE_WRITE_TOOLS = ["write_file", "edit_file", "restore_backup"] as const;

function rule(id: string, priority: number, tool: string, pathGlob: string | null, decision: Decision, note: string): PolicyRuleData {
  return { id, priority, tool, pathGlob, command: null, decision, note, enabled: true };
}

/** The rules that let writes apply at once and keep risky paths asking, for a relaxed preset. */
function relaxedRules(name: PresetName): PolicyRuleData[] {
  return [
    ...RUNS_LATER_PATHS.flatMap(([id, glob, note]) => FILE_WRITE_TOOLS.map((tool) => rule(`preset:${name}:risky-${id}:${tool}`, RISKY, tool, glob, "ask", `runs later: ${note}`))),
    rule(`preset:${name}:write-file`, TOOLS, "write_file", null, "allow", "applies at once: backed up, diffed and revertible"),
    rule(`preset:${name}:edit-file`, TOOLS, "edit_file", null, "allow", "applies at once: backed up, diffed and revertible"),
    rule(`preset:${name}:restore-backup`, TOOLS, "restore_backup", null, "allow", "applies at once: the current bytes are backed up first"),
    rule(
      `preset:${name}:run-boxed`,
      SHELL_BOXED,
      "run_command",
      null,
      "allow",
      "runs in the sandbox; asks to leave it (network, paths outside, no sandbox); risky change sets are held",
    ),
  ];
}

const REPLACED = ["default:write-file", "default:edit-file", "default:restore-backup"] as const;

const STRICT_CHECKS: PresetCheck[] = [];

function relaxedChecks(large: boolean): PresetCheck[] {
  return [
    { id: "boxed-writes", decision: "allow", text: "a command's writes inside the workspace apply without asking when it runs in the sandbox with change capture (backed up, revert_call undoes them); without the box or capture they ask" },
    { id: "walks-into-git", decision: "allow", text: "a recursive read in the sandbox (grep -r, rg) may read .git; a git config holding a credential still asks, and so does every other sensitive file (.env, keys)" },
    { id: "git-directories", decision: "ask", text: "writes into a git directory found by its shape (a .git file's target, a bare repository) ask" },
    { id: "git-config-paths", decision: "ask", text: "writes to paths the repository's git configuration runs ask: the core.hooksPath directory, config files it includes, scripts named by core.fsmonitor, filters, diff drivers, aliases…" },
    ...(large
      ? [{ id: "large-change", decision: "ask" as const, text: `a write, edit or restore that removes more than ${LARGE_CHANGE.fraction * 100}% of a file of ${LARGE_CHANGE.minLines}+ lines (or ${LARGE_CHANGE.minBytes}+ bytes without lines) asks` }]
      : []),
    {
      id: "held-change-sets",
      decision: "ask",
      text: large
        ? "a command's change set is held for a reviewer when it changes a sensitive or runs-later file, .git internals, stages or commits such a file in git (or hides a file's changes from git), or deletes many files"
        : "a command's change set is held for a reviewer when it changes a sensitive or runs-later file or .git internals, or stages or commits such a file in git (or hides a file's changes from git); many deletions apply at once, each deleted file backed up (revert_call undoes them)",
    },
  ];
}

/** Every preset by name. */
export const PRESETS: Readonly<Record<PresetName, PresetSpec>> = {
  strict: {
    name: "strict",
    summary: "Every write, edit, restore and non-read-only command asks a reviewer (the stored rules, unchanged).",
    replaces: [],
    rules: [],
    checks: { boxedWritesApply: false, boxedWalksIntoGit: false, largeChange: false, holdLargeDeletions: true, gitDirectories: false },
    describedChecks: STRICT_CHECKS,
  },
  balanced: {
    name: "balanced",
    summary:
      "Reads, writes and edits inside the workspace apply at once (backed up, revertible); files that run later, large deletions and secrets ask; commands run in the sandbox and ask only to leave it.",
    replaces: REPLACED,
    rules: relaxedRules("balanced"),
    checks: { boxedWritesApply: true, boxedWalksIntoGit: true, largeChange: true, holdLargeDeletions: true, gitDirectories: true },
    describedChecks: relaxedChecks(true),
  },
  autonomous: {
    name: "autonomous",
    summary: "Only leaving the sandbox (network, paths outside, files that run later outside it), sensitive files and deny rules stop a call; everything is recorded, backed up and revertible.",
    replaces: REPLACED,
    rules: relaxedRules("autonomous"),
    checks: { boxedWritesApply: true, boxedWalksIntoGit: true, largeChange: false, holdLargeDeletions: false, gitDirectories: true },
    describedChecks: relaxedChecks(false),
  },
};

/**
 * The rules a call is judged by under `preset`: the stored rules (defaults as the operator left
 * them, operator rules, grants), less the default rules the preset replaces, plus the preset's own.
 * Under `strict` this is the stored table unchanged.
 * @param stored every stored rule (enabled or not), e.g. from lib/policy/rule-store.ts `loadRules`
 */
export function rulesForPreset(preset: PresetName, stored: readonly PolicyRuleData[]): PolicyRuleData[] {
  const spec = PRESETS[preset];
  if (spec.replaces.length === 0 && spec.rules.length === 0) return [...stored];
  const replaced = new Set(spec.replaces);
  return [...stored.filter((r) => !replaced.has(r.id)), ...spec.rules];
}

/** The rules of `preset` over the built-in defaults only (no stored table): for docs and tests. */
export function defaultRulesForPreset(preset: PresetName): PolicyRuleData[] {
  return rulesForPreset(preset, DEFAULT_RULES);
}

/**
 * Whether a change to a file is a large deletion or rewrite (`LARGE_CHANGE`).
 * @param before the file as it is: its line count and size (bytes)
 * @param change lines the change removes (`deletions` of its diff) and the new size (bytes)
 * @returns a reason for the reviewer, or null
 */
export function largeChangeReason(path: string, before: { lines: number; bytes: number }, change: { deletions: number; afterBytes: number }): string | null {
  if (before.lines >= LARGE_CHANGE.minLines && change.deletions > before.lines * LARGE_CHANGE.fraction) {
    return `large_change: ${path} loses ${change.deletions} of its ${before.lines} lines`;
  }
  if (before.lines < 2 && before.bytes >= LARGE_CHANGE.minBytes && change.afterBytes < before.bytes * (1 - LARGE_CHANGE.fraction)) {
    return `large_change: ${path} shrinks from ${before.bytes} to ${change.afterBytes} bytes`;
  }
  return null;
}
