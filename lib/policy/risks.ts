import path from "node:path";
import type { Argv } from "@/lib/policy/command-pattern";
import type { RiskKind, RiskLabel } from "@/lib/policy/types";

/**
 * Risk labels: the dangers a reviewer should see before anything else, named in plain words
 * ("sends data over the network", "deletes files"). They are computed from what the policy
 * already knows about a call (the parsed command, the paths it reads and writes, the rules it
 * matched) and do not change the decision; they explain it.
 */

/** Most serious first: the order labels are shown in. */
const ORDER: RiskKind[] = [
  "writes_outside_workspace",
  "reads_secret",
  "leaves_sandbox",
  "network_egress",
  "irreversible",
  "deletes",
  "runs_workspace_code",
  "large_change",
];

/** Collects labels, one per kind and text, and returns them in `ORDER`. */
export class RiskSet {
  private readonly labels = new Map<string, RiskLabel>();

  add(kind: RiskKind, text: string): void {
    const key = `${kind}\u0000${text}`;
    if (!this.labels.has(key)) this.labels.set(key, { kind, text });
  }

  addAll(labels: readonly RiskLabel[]): void {
    for (const l of labels) this.add(l.kind, l.text);
  }

  /** The labels, most serious kind first; at most `perKind` texts of one kind (the rest summed up). */
  list(perKind = 4): RiskLabel[] {
    const out: RiskLabel[] = [];
    for (const kind of ORDER) {
      const of = [...this.labels.values()].filter((l) => l.kind === kind);
      out.push(...of.slice(0, perKind));
      if (of.length > perKind) out.push({ kind, text: `and ${of.length - perKind} more like it` });
    }
    return out;
  }
}

/** Programs that talk to the network whatever their arguments. */
const NETWORK_PROGRAMS = new Set([
  "curl", "wget", "ssh", "scp", "sftp", "nc", "ncat", "netcat", "socat", "telnet", "ftp", "http", "https", "xh",
  "gh", "ping", "dig", "nslookup", "host", "aria2c", "lftp", "rclone", "aws", "gcloud", "az", "kubectl", "helm",
]);

/** Subcommands that reach the network, per program. */
const NETWORK_SUBCOMMANDS: Record<string, Set<string>> = {
  git: new Set(["push", "fetch", "pull", "clone", "ls-remote", "submodule", "remote", "send-email", "archive"]),
  npm: new Set(["install", "i", "ci", "add", "update", "upgrade", "publish", "exec", "x", "dlx", "view", "info", "outdated", "audit", "login", "adduser", "unpublish", "deprecate", "dist-tag"]),
  yarn: new Set(["install", "add", "upgrade", "up", "publish", "dlx", "npm", "info"]),
  pnpm: new Set(["install", "i", "add", "update", "up", "publish", "dlx", "exec", "outdated", "audit"]),
  pip: new Set(["install", "download", "index", "search", "wheel"]),
  pip3: new Set(["install", "download", "index", "search", "wheel"]),
  uv: new Set(["pip", "add", "sync", "lock", "run", "tool", "venv", "publish"]),
  cargo: new Set(["install", "fetch", "publish", "update", "search", "add", "login", "yank"]),
  go: new Set(["get", "install", "mod"]),
  gem: new Set(["install", "push", "update", "fetch"]),
  bundle: new Set(["install", "update"]),
  apt: new Set(["install", "update", "upgrade", "download"]),
  "apt-get": new Set(["install", "update", "upgrade", "download", "source"]),
  docker: new Set(["pull", "push", "login", "build", "run"]),
  podman: new Set(["pull", "push", "login", "build", "run"]),
  brew: new Set(["install", "update", "upgrade", "fetch"]),
  twine: new Set(["upload", "register"]),
  poetry: new Set(["install", "add", "update", "publish", "lock"]),
};

/** Subcommands (or argument shapes) that cannot be taken back. */
const IRREVERSIBLE_SUBCOMMANDS: Record<string, Set<string>> = {
  git: new Set(["push", "send-email"]),
  npm: new Set(["publish", "unpublish", "deprecate"]),
  yarn: new Set(["publish"]),
  pnpm: new Set(["publish"]),
  cargo: new Set(["publish", "yank"]),
  twine: new Set(["upload"]),
  gem: new Set(["push", "yank"]),
  docker: new Set(["push"]),
  podman: new Set(["push"]),
  poetry: new Set(["publish"]),
  uv: new Set(["publish"]),
};

/** Interpreters: with a file operand they run code from that file. */
const INTERPRETERS = new Set([
  "python", "python2", "python3", "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua", "Rscript", "julia",
  "sh", "bash", "dash", "zsh", "ksh", "tsx", "ts-node", "java", "dotnet",
]);

/** Build and test runners: they run code the workspace defines (scripts, Makefiles, test files). */
const RUNNERS = new Set(["make", "gmake", "ninja", "cmake", "npx", "pytest", "tox", "nox", "gradle", "mvn", "rake", "just", "jest", "vitest", "mocha", "tsc", "webpack", "vite", "next", "playwright", "ctest", "meson"]);
const RUNNER_SUBCOMMANDS: Record<string, Set<string>> = {
  npm: new Set(["test", "t", "run", "run-script", "start", "stop", "restart", "exec", "x", "install", "i", "ci", "rebuild", "pack", "publish"]),
  yarn: new Set(["test", "run", "start", "exec", "install", "add", "node", "dlx"]),
  pnpm: new Set(["test", "run", "start", "exec", "install", "i", "add", "dlx"]),
  cargo: new Set(["run", "test", "build", "bench", "check", "install"]),
  go: new Set(["run", "test", "build", "generate", "install"]),
  pip: new Set(["install"]),
  pip3: new Set(["install"]),
  uv: new Set(["run", "pip", "sync"]),
  poetry: new Set(["run", "install"]),
  bundle: new Set(["exec", "install"]),
  dotnet: new Set(["run", "test", "build"]),
  python: new Set(["-m"]),
  python3: new Set(["-m"]),
};

/** Programs that delete or empty files. */
const DELETERS = new Set(["rm", "rmdir", "unlink", "shred", "truncate"]);

/**
 * Labels for one command (after its wrappers are looked through), from its argv.
 * @param argv the command's tokens (null values: not known before it runs)
 * @param name its program name (basename), or null when not static
 * @param options.boxed the command runs in the sandbox, where what it changes in the workspace is
 *   captured and backed up before it is applied (revert_call undoes it): deleting or discarding
 *   workspace files is then not irreversible; without the box it is
 */
export function commandRisks(argv: Argv, name: string | null, options: { boxed?: boolean } = {}): RiskLabel[] {
  const out: RiskLabel[] = [];
  const undoable = options.boxed ? " (in the box: backed up first, revert_call undoes it)" : "";
  /** Discarding workspace content: irreversible outside the box, backed up inside it. */
  const local = (text: string): RiskLabel => (options.boxed ? { kind: "deletes", text: text + undoable } : { kind: "irreversible", text });
  if (name === null) return out;
  const words = argv.tokens.map((t) => t.value);
  const args = words.slice(1);
  const sub = args.find((a) => a !== null && !a.startsWith("-")) ?? null;
  const shown = sub ? `${name} ${sub}` : name;
  const flag = (re: RegExp) => args.some((a) => a !== null && re.test(a));

  if (NETWORK_PROGRAMS.has(name) || (sub !== null && NETWORK_SUBCOMMANDS[name]?.has(sub))) {
    out.push({ kind: "network_egress", text: `${shown} connects to the network (it can send data out)` });
  }
  if (sub !== null && IRREVERSIBLE_SUBCOMMANDS[name]?.has(sub)) {
    const force = name === "git" && flag(/^(--force|--force-with-lease|-f|--mirror|--delete|-d)$|^\+/);
    out.push({ kind: "irreversible", text: force ? `${shown} rewrites or deletes history on the remote; it cannot be undone from here` : `${shown} publishes outside this machine; it cannot be undone from here` });
  }
  if (DELETERS.has(name)) {
    const recursive = flag(/^-[A-Za-z]*[rR]|^--recursive$/);
    out.push({ kind: "deletes", text: (name === "truncate" ? "truncate empties or cuts files" : `${name} deletes files${recursive ? " recursively" : ""}`) + undoable });
    if (name !== "rmdir" && !options.boxed) out.push({ kind: "irreversible", text: `${name} in the shell keeps no backup: the files cannot be restored from the gateway` });
    if (recursive) out.push({ kind: "large_change", text: `${name} -r can remove whole directory trees` });
  }
  if (name === "git" && sub !== null) {
    if (sub === "clean") {
      out.push({ kind: "deletes", text: `git clean deletes untracked files${undoable}` });
      if (!options.boxed) out.push({ kind: "irreversible", text: "untracked files deleted by git clean are not in git and have no backup" });
      if (flag(/^-[A-Za-z]*[dx]/)) out.push({ kind: "large_change", text: "git clean -d/-x removes whole directories or ignored files" });
    }
    if (sub === "rm") out.push({ kind: "deletes", text: "git rm deletes files" });
    if (sub === "reset" && flag(/^--hard$/)) {
      out.push(local("git reset --hard discards uncommitted changes"));
      out.push({ kind: "large_change", text: "git reset --hard can change every tracked file" });
    }
    if ((sub === "checkout" || sub === "restore") && args.some((a) => a === "." || a === "--")) {
      out.push(local(`git ${sub} discards uncommitted changes to the files it names`));
    }
  }
  if (name === "find" && args.includes("-delete")) out.push({ kind: "deletes", text: "find -delete deletes every file it matches" });
  if ((name === "chmod" || name === "chown" || name === "chgrp") && flag(/^-[A-Za-z]*R|^--recursive$/)) {
    out.push({ kind: "large_change", text: `${name} -R changes a whole directory tree` });
  }
  if (name === "sed" && flag(/^-[A-Za-z]*i|^--in-place/)) {
    const files = args.filter((a) => a !== null && !a.startsWith("-")).length - 1;
    if (files > 20) out.push({ kind: "large_change", text: `sed -i edits ${files} files in place` });
  }
  // Code from the workspace.
  const first = words[0];
  if (first !== null && first !== undefined && first.includes("/") && !first.startsWith("/usr/") && !first.startsWith("/bin/")) {
    out.push({ kind: "runs_workspace_code", text: `runs the program ${first}, whatever it contains` });
  } else if (INTERPRETERS.has(name)) {
    const script = args.find((a) => a !== null && !a.startsWith("-"));
    if (args.some((a) => a === "-m") && (name === "python" || name === "python3")) {
      const mod = args[args.indexOf("-m") + 1];
      out.push({ kind: "runs_workspace_code", text: `${name} -m ${mod ?? "…"} runs Python code${mod === "pip" ? "" : " that may come from the workspace"}` });
    } else if (script && !args.some((a) => a === "-c" || a === "-e" || a === "--eval")) {
      out.push({ kind: "runs_workspace_code", text: `${name} runs the script ${path.posix.basename(script)}` });
    } else if (args.some((a) => a === "-c" || a === "-e" || a === "--eval")) {
      out.push({ kind: "runs_workspace_code", text: `${name} runs code given on the command line` });
    }
  } else if (RUNNERS.has(name) || (sub !== null && RUNNER_SUBCOMMANDS[name]?.has(sub))) {
    out.push({ kind: "runs_workspace_code", text: `${shown} runs code defined in the workspace (scripts, build files, tests) with the command's rights` });
  }
  return out;
}
