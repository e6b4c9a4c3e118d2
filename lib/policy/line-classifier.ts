import path from "node:path";
import { matchCommandPattern, type Argv, type ArgvToken } from "@/lib/policy/command-pattern";
import fs from "node:fs/promises";
import { commandName, isStaticallyModelled, unwrapCommand, HARMLESS_ENV_NAMES, type Floor, type Layer, type Walk } from "@/lib/policy/command-knowledge";
import { repositoryTrust } from "@/lib/policy/git-repo";
import { commandRisks, RiskSet } from "@/lib/policy/risks";
import { expandGlob } from "@/lib/policy/shell-glob";
import { bySeverityDesc, commandPatternOf, isToolRule, maxDecision, ruleGlobMatches, ruleRef } from "@/lib/policy/rule-match";
import { parseShell, type ShellNode, type ShellRedirect, type SimpleCommand } from "@/lib/policy/shell-parse";
import { ENDLESS_DEVICES, logicalCd, physicalPath, placeOf } from "@/lib/policy/shell-paths";
import { expandWord, isDynamicVariable, staticValue, type ExpansionEnv } from "@/lib/policy/shell-words";
import type { CommandPart, Decision, PolicyRuleData, RiskLabel, RuleRef } from "@/lib/policy/types";
import { MAX_WALK_ENTRIES, sensitiveFilesUnder } from "@/lib/policy/sensitive-walk";

/**
 * The walk that classifies one command line: it parses the line (and every `bash -c` / `eval`
 * string in it) with the bash grammar, follows the working directory through `cd`, `&&`, `||`
 * and subshells, expands each simple command's words as far as they are static, and gives each
 * part its findings: the command rules that match it and the floors the policy applies whatever
 * the rules say (lib/policy/command-policy.ts describes the semantics).
 *
 * Interface: `new LineClassifier(ctx, rules).classify()`, once per line. The rules are the
 * active ones for `run_command` (rule-match.ts `activeRules`); the classifier reads the disk only
 * for recursive reads (sensitive-walk.ts), glob expansion (shell-glob.ts) and repository trust
 * (git-repo.ts).
 */


/** What the classifier needs to know about the call. */
export interface CommandContext {
  /** The command line as sent. */
  command: string;
  /** Fenced absolute working directory. */
  cwd: string;
  /** Canonical workspace root. */
  workspaceRoot: string;
  /** The child environment the executor will use (lib/exec/child-env.ts). */
  env: Record<string, string>;
  /**
   * The command runs with an environment the policy does not know (the person's own, at the
   * Claude Code hook door): every variable and `~` is unknown, assignments may change exported
   * variables, and `env` is never read for the command's values.
   */
  envUnknown?: boolean;
  /**
   * Why the directory the command runs in is not known (the hook payload named none, or one
   * outside the workspace): `cwd` is then a placeholder, relative paths cannot be judged, and
   * the line asks with this reason.
   */
  cwdUnknown?: string;
  /** The command will run inside the OS sandbox (absent: it will not; see PolicyInput.boxed). */
  boxed?: boolean;
  /** Why the sandbox is unavailable: every command asks with this reason. */
  sandboxProblem?: string;
  /** The call asks for the network inside the sandbox. */
  network?: boolean;
  /**
   * A relaxed preset's checks (lib/policy/presets.ts): `boxedWrites` lets writes inside the
   * workspace run without asking (set only when the command is boxed and its changes captured);
   * `gitWalks` lets a recursive read in the box walk `.git` (set only when boxed), except a git
   * config that holds a credential.
   */
  relaxed?: { boxedWrites?: boolean; gitWalks?: boolean };
}

/** The classification of a whole command line. */
export interface CommandClassification {
  decision: Decision;
  /** The rule behind the decision, when a rule (not a built-in floor) decided. */
  rule: RuleRef | null;
  /** Short reasons, strongest first. */
  reasons: string[];
  parts: CommandPart[];
  /** The dangers seen in the line, most serious first. */
  risks: RiskLabel[];
}

/** How deep `bash -c 'bash -c …'` and `eval` are followed. */
const MAX_SCRIPT_DEPTH = 8;

/** Programs whose first argument is a subcommand; reasons name both (`git logout`). */
const SUBCOMMAND_PROGRAMS = new Set(["git", "npm", "yarn", "pnpm", "cargo", "go", "docker", "kubectl", "pip", "pip3", "apt", "apt-get", "brew", "systemctl"]);

/** Commands after which every variable may hold anything (bash(1) builtins that assign). */
const ASSIGNS_ANY_VARIABLE = new Set(["read", "mapfile", "readarray", "getopts", "eval", "source", ".", "let"]);

/** Commands that change the working directory of the commands after them. */
const CHANGES_CWD = new Set(["cd", "pushd", "popd", "source", ".", "eval"]);

/** Variables the line may not change without the policy asking (they change how programs run). */
const SENSITIVE_SHELL_VARIABLES = /^(PATH|IFS|HOME|CDPATH|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|GLOBIGNORE|PS4|PROMPT_COMMAND|LD_[A-Z_]+|DYLD_[A-Z_]+|GIT_[A-Z_]+|PAGER|EDITOR|VISUAL|TMPDIR|PYTHONPATH|NODE_OPTIONS|PERL5OPT|RUBYOPT)$/;

type Cwds = readonly string[] | null;

interface Outcome {
  ok: Cwds;
  fail: Cwds;
}

/** A decision with where it came from. */
interface Finding {
  decision: Decision;
  rule: PolicyRuleData | null;
  reason: string;
  /** The danger this finding names, for the reviewer (risks.ts). */
  risk?: RiskLabel;
}

/** The per-script expansion context (a `bash -c` string is a new script with its own variables). */
interface Scope {
  expansion: ExpansionEnv;
  /** Functions defined in the script whose body changes the working directory. */
  cwdChangingFunctions: Set<string>;
  /** Some command of the script may change the working directory (function bodies then run in an unknown one). */
  scriptChangesCwd: boolean;
  /** Some command of the script may change how wildcards expand (`shopt`, `set -f`, `GLOBIGNORE=`). */
  globOptionsChange: boolean;
  depth: number;
}


export class LineClassifier {
  private readonly parts: Array<CommandPart & { findings: Finding[]; modelled: boolean }> = [];
  private readonly lineFindings: Finding[] = [];
  private readonly risks = new RiskSet();

  constructor(
    private readonly ctx: CommandContext,
    private readonly rules: PolicyRuleData[],
  ) {}

  /**
   * Classifies `ctx.command`.
   * @returns the line's decision, its deciding rule, reasons (strongest first) and every part.
   * Never throws for any command string (errors only if the bash grammar cannot be loaded).
   */
  async classify(): Promise<CommandClassification> {
    await this.script(this.ctx.command, this.ctx.cwdUnknown ? null : [this.ctx.cwd], 0, null);
    return this.result();
  }

  /** Parses and walks one script (the line, or a `bash -c` / `eval` string inside it). */
  private async script(source: string, cwds: Cwds, depth: number, via: string | null): Promise<void> {
    if (depth > MAX_SCRIPT_DEPTH) {
      this.unclassifiable(`${via ?? "shell"} nested too deep`);
      return;
    }
    const parsed = await parseShell(source);
    for (const p of parsed.problems) this.unclassifiable(via ? `${via}: ${p}` : p);
    const commands = allCommands(parsed.root);
    const expansion: ExpansionEnv = {
      env: this.ctx.envUnknown ? {} : this.ctx.env,
      dynamicNames: parsed.assignedNames,
      allDynamic: false,
      ...(this.ctx.envUnknown && { unknownEnv: true }),
    };
    expansion.allDynamic = commands.some((c) => assignsAnyVariable(c, expansion));
    const scope: Scope = {
      expansion,
      cwdChangingFunctions: cwdChangingFunctions(parsed.root, expansion),
      scriptChangesCwd: false,
      globOptionsChange: commands.some((c) => changesGlobbing(c, expansion)),
      depth,
    };
    scope.scriptChangesCwd = anyCwdChange(parsed.root, scope);
    await this.walk(parsed.root, cwds, scope);
  }

  private result(): CommandClassification {
    if (this.ctx.cwdUnknown) {
      this.lineFindings.push({ decision: "ask", rule: null, reason: `unknown_cwd: ${this.ctx.cwdUnknown}; relative paths and the directory the command works in cannot be judged` });
    }
    if (this.ctx.sandboxProblem) {
      this.lineFindings.push({
        decision: "ask",
        rule: null,
        reason: `sandbox_unavailable: ${this.ctx.sandboxProblem}; the command would run with the gateway's own rights, so every command needs approval`,
        risk: { kind: "leaves_sandbox", text: `runs without the sandbox (${this.ctx.sandboxProblem}): with the gateway's own rights` },
      });
    } else if (!this.ctx.boxed && this.parts.some((p) => !p.modelled)) {
      this.risks.add("leaves_sandbox", "runs without the sandbox, with the rights of whoever runs it");
    }
    if (this.ctx.network) this.risks.add("leaves_sandbox", "asks for network access from inside the sandbox");
    const parts: CommandPart[] = this.parts.map(({ findings: _f, modelled: _m, ...p }) => p);
    let decision: Decision = parts.length ? "allow" : "ask";
    for (const f of this.lineFindings) decision = maxDecision(decision, f.decision);
    for (const p of parts) decision = maxDecision(decision, p.decision);
    const all = [...this.lineFindings, ...this.parts.flatMap((p) => p.findings)].filter((f) => f.reason !== "" && (f.decision !== "allow" || decision === "allow"));
    all.sort((a, b) => bySeverityDesc(a.decision, b.decision));
    const reasons = [...new Set(all.map((f) => visible(f.reason)))];
    if (!parts.length && !reasons.length) reasons.push("no command found");
    const decisive = this.parts.find((p) => p.decision === decision);
    for (const f of [...this.lineFindings, ...this.parts.flatMap((p) => p.findings)]) if (f.risk) this.risks.add(f.risk.kind, visible(f.risk.text));
    return { decision, rule: decisive?.rule ?? null, reasons, parts, risks: this.risks.list() };
  }

  private unclassifiable(why: string): void {
    this.lineFindings.push({ decision: "ask", rule: null, reason: `unclassifiable: ${why}` });
  }

  private async walk(node: ShellNode, cwds: Cwds, scope: Scope): Promise<Outcome> {
    switch (node.kind) {
      case "command":
        return this.command(node, cwds, scope);
      case "sequence": {
        let cur = cwds;
        let last: Outcome = { ok: cwds, fail: cwds };
        for (const item of node.items) {
          last = await this.walk(item, cur, scope);
          cur = union(last.ok, last.fail);
        }
        return last;
      }
      case "and": {
        const l = await this.walk(node.left, cwds, scope);
        const r = await this.walk(node.right, l.ok, scope);
        return { ok: r.ok, fail: union(l.fail, r.fail) };
      }
      case "or": {
        const l = await this.walk(node.left, cwds, scope);
        const r = await this.walk(node.right, l.fail, scope);
        return { ok: union(l.ok, r.ok), fail: r.fail };
      }
      case "not": {
        const r = await this.walk(node.body, cwds, scope);
        return { ok: r.fail, fail: r.ok };
      }
      case "isolated":
        await this.walk(node.body, cwds, scope);
        return { ok: cwds, fail: cwds };
      case "compound": {
        // Bodies may run any number of times: a `cd` inside leaves the directory unknown.
        const changes = anyCwdChange(node, scope);
        let cur: Cwds = changes ? null : cwds;
        for (const item of node.items) {
          const r = await this.walk(item, cur, scope);
          cur = changes ? null : union(r.ok, r.fail);
        }
        return { ok: cur, fail: cur };
      }
      case "function":
        // The body runs when called, from wherever the caller is then.
        await this.walk(node.body, scope.scriptChangesCwd ? null : cwds, scope);
        return { ok: cwds, fail: cwds };
    }
  }

  private async command(cmd: SimpleCommand, cwds: Cwds, scope: Scope): Promise<Outcome> {
    for (const n of cmd.nested) await this.walk({ kind: "isolated", body: n }, cwds, scope);
    const first: Finding[] = [];
    const tokens = await this.expandArgv(cmd, scope, first, cwds);
    first.push(...this.assignmentFindings(cmd, tokens.length > 0, scope));
    first.push(...(await this.redirectFindings(cmd.redirects, cwds, scope)));
    first.push(...(await this.cwdFindings(cwds)));
    const argv: Argv = { tokens, openEnded: false };
    if (tokens.length === 0) {
      this.addPart(cmd.text, [], first);
      return { ok: cwds, fail: cwds };
    }
    if (tokens[0].value === null || tokens[0].glob) {
      first.push({ decision: "ask", rule: null, reason: `unclassifiable: command name is not static (${cmd.words[0]?.text ?? ""})` });
    }
    const layers = unwrapCommand(argv);
    await this.layers(cmd.text, tokens, layers, first, cwds, scope);
    return this.cwdAfter(layers, cwds, scope);
  }

  /**
   * Expands the words; a word known only at run time becomes an unknown token (and asks).
   * Wildcards are expanded against the directory the command runs in, as bash will
   * (shell-glob.ts), so the files they name are checked like any other path; when that cannot
   * be done (unknown directory, several possible directories that disagree, options that change
   * globbing, a huge directory) the word stays a glob token and the command asks.
   */
  private async expandArgv(cmd: SimpleCommand, scope: Scope, findings: Finding[], cwds: Cwds): Promise<ArgvToken[]> {
    const tokens: ArgvToken[] = [];
    for (const word of cmd.words) {
      const e = expandWord(word, scope.expansion);
      if (!e.static) {
        findings.push({ decision: "ask", rule: null, reason: `unclassifiable: ${e.why} is only known when the command runs` });
        tokens.push({ value: null, glob: false });
        continue;
      }
      if (!e.glob || e.pattern === undefined) {
        for (const f of e.fields) tokens.push({ value: f, glob: e.glob });
        continue;
      }
      const expanded = await this.expandWildcard(e.pattern, e.fields[0], cwds, scope);
      if (typeof expanded === "string") {
        findings.push({ decision: "ask", rule: null, reason: `unclassifiable: the wildcard ${e.fields[0]} ${expanded}` });
        tokens.push({ value: e.fields[0], glob: true });
      } else {
        for (const w of expanded) tokens.push({ value: w, glob: false });
      }
    }
    return tokens;
  }

  /** The words `pattern` becomes in every directory the command may run in, or why that is not known. */
  private async expandWildcard(pattern: string, written: string, cwds: Cwds, scope: Scope): Promise<string[] | string> {
    if (scope.globOptionsChange) return "may expand differently: the line changes how bash expands wildcards (shopt, set -f, GLOBIGNORE)";
    const dirs = pattern.startsWith("/") ? ["/"] : cwds;
    if (dirs === null) return "is expanded in a directory that is not known before the command runs";
    let result: string[] | null = null;
    for (const dir of dirs) {
      const r = await expandGlob(pattern, dir);
      if (!r.ok) return `cannot be expanded before the command runs (${r.why})`;
      if (result !== null && JSON.stringify(result) !== JSON.stringify(r.words)) return "names different files in the directories the command may run in";
      result = r.words;
    }
    return result ?? [written];
  }

  /** `VAR=x cmd` changes cmd's environment; `VAR=x` alone changes the shell's. */
  private assignmentFindings(cmd: SimpleCommand, hasCommand: boolean, scope: Scope): Finding[] {
    const out: Finding[] = [];
    for (const a of cmd.assignments) {
      const name = a.name.replace(/\[.*$/s, "");
      if (hasCommand && !HARMLESS_ENV_NAMES.test(name)) {
        out.push({ decision: "ask", rule: null, reason: `sets ${name} for the command it runs` });
      } else if (!hasCommand && (SENSITIVE_SHELL_VARIABLES.test(name) || name in scope.expansion.env)) {
        out.push({ decision: "ask", rule: null, reason: `changes ${name} for the commands after it` });
      } else if (!hasCommand && scope.expansion.unknownEnv) {
        out.push({ decision: "ask", rule: null, reason: `changes ${name}, which the person's own environment may export to the commands after it` });
      }
    }
    return out;
  }

  /**
   * What a here-string or heredoc feeds the command: with an environment the policy does not
   * know, any variable it expands may be a credential of the person's own (the command may print it).
   */
  private contentFindings(r: ShellRedirect, scope: Scope): Finding[] {
    const content = r.content!;
    // With the child environment known, the values are the child's own (and substitutions in
    // the content are judged as nested commands already).
    if (!scope.expansion.unknownEnv) return [];
    if ("word" in content) {
      const e = expandWord(content.word, scope.expansion);
      return e.static ? [] : [{ decision: "ask", rule: null, reason: `unclassifiable: here-string ${r.text}: ${e.why} is only known when the command runs` }];
    }
    const names = content.variables.map((v) => `$${v}`).join(", ");
    return [{ decision: "ask", rule: null, reason: `unclassifiable: heredoc ${r.text} expands ${names}, variables of the person's own environment, which the policy does not know` }];
  }

  private async redirectFindings(redirects: ShellRedirect[], cwds: Cwds, scope: Scope): Promise<Finding[]> {
    const out: Finding[] = [];
    for (const r of redirects) {
      if (r.content) out.push(...this.contentFindings(r, scope));
      const kind = redirectKind(r);
      if (kind === "none" || !r.target) continue;
      if (r.target.parts.length === 1 && r.target.parts[0].kind === "dynamic" && /^[<>]\(/.test(r.target.text)) continue; // >(cmd): a pipe
      const target = staticValue(r.target, scope.expansion);
      if (target === null) {
        out.push({ decision: "ask", rule: null, reason: `unclassifiable: redirect target ${r.target.text} is only known when the command runs` });
        continue;
      }
      out.push(...(await this.pathFindings(kind, target, cwds, `${r.text}`)));
      if (kind === "write" && [">", ">|", "&>", ">&"].includes(r.operator) && cwds !== null) {
        for (const c of target.startsWith("/") ? ["/"] : cwds) {
          const st = await fs.lstat(path.resolve(c, target)).catch(() => null);
          if (st?.isFile() && st.size > 0) {
            out.push({ decision: "allow", rule: null, reason: "", risk: { kind: "deletes", text: `${r.text} empties ${target} before writing it (its old content is not backed up)` } });
            break;
          }
        }
      }
    }
    return out;
  }

  /** A path the command reads or writes, checked from every directory it may run in. */
  private async pathFindings(kind: "read" | "write", value: string, cwds: Cwds, via: string): Promise<Finding[]> {
    const place = await placeOf(value, cwds, this.ctx.workspaceRoot);
    switch (place.place) {
      case "device":
        return kind === "read" && ENDLESS_DEVICES.has(place.absolute)
          ? [{ decision: "ask", rule: null, reason: `endless_read: ${place.absolute} (${via}) never ends; it runs only after approval` }]
          : [];
      case "outside":
        if (kind === "write") {
          return [
            {
              decision: "deny",
              rule: null,
              reason: `write_outside_workspace: ${place.absolute} (${via})`,
              risk: { kind: "writes_outside_workspace", text: `${via} writes ${place.absolute}, outside the workspace` },
            },
          ];
        }
        return [
          {
            decision: "ask",
            rule: null,
            reason: place.processLink
              ? `read_outside_workspace: ${place.absolute} (${via}) is a process's view of the file system or its open files, which lead outside the workspace`
              : `read_outside_workspace: ${place.absolute} (${via})`,
            risk: {
              kind: "reads_secret",
              text: place.processLink ? `${via} reads ${place.absolute}: another process's files, outside the workspace` : `${via} reads ${place.absolute}, outside the workspace`,
            },
          },
        ];
      case "unknown":
        return [{ decision: "ask", rule: null, reason: `unclassifiable: ${place.why}` }];
      case "inside": {
        const out: Finding[] = [];
        if (kind === "write" && this.ctx.relaxed?.boxedWrites) {
          out.push({ decision: "allow", rule: null, reason: `write_in_workspace: ${place.relative || "."} (${via}; in the sandbox: captured, backed up, revert_call undoes it)` });
        } else if (kind === "write") {
          out.push({ decision: "ask", rule: null, reason: `write_in_workspace: ${place.relative || "."} (${via}; shell writes bypass the diff and backup of write_file/edit_file)` });
        }
        for (const rule of this.rules) {
          if (rule.pathGlob && rule.decision !== "allow" && ruleGlobMatches(rule, place.relative)) {
            const risk: RiskLabel | undefined =
              kind === "read" ? { kind: "reads_secret", text: `${via} reads ${place.relative}${rule.note ? ` (${rule.note})` : ""}` } : undefined;
            out.push({ decision: rule.decision, rule, reason: `${place.relative}: ${verb(rule.decision)} by rule ${rule.id}${rule.note ? ` (${rule.note})` : ""}`, ...(risk && { risk }) });
          }
        }
        return out;
      }
    }
  }

  private async cwdFindings(cwds: Cwds): Promise<Finding[]> {
    if (cwds === null) return [];
    const out: Finding[] = [];
    for (const cwd of cwds) {
      const place = await placeOf(cwd, null, this.ctx.workspaceRoot);
      if (place.place === "outside") out.push({ decision: "ask", rule: null, reason: `runs outside the workspace: ${place.absolute}` });
    }
    return out;
  }

  /** One part per layer that is not looked through; wrappers' findings join the next part. */
  private async layers(text: string, tokens: ArgvToken[], layers: Layer[], first: Finding[], cwds: Cwds, scope: Scope): Promise<void> {
    let pending: Finding[] = [...first];
    let isFirst = true;
    for (const layer of layers) {
      const findings = [...pending, ...(await this.effectFindings(layer, cwds))];
      const ruleFindings = this.ruleFindings(layer.argv);
      if (layer.transparent) {
        // A rule naming the wrapper still counts; otherwise the command it runs decides.
        pending = [...findings, ...ruleFindings.filter((f) => f.rule)];
        continue;
      }
      const name = commandName(layer.argv);
      for (const r of commandRisks(layer.argv, name, { boxed: this.ctx.boxed === true })) this.risks.add(r.kind, visible(r.text));
      const modelled = isStaticallyModelled(layer.argv);
      const all = [...ruleFindings, ...findings];
      if (!this.ctx.boxed && !modelled && all.every((f) => f.decision === "allow")) {
        all.push({
          decision: "ask",
          rule: null,
          reason: `unboxed: ${displayName(layer.argv)} is allowed by a rule, but this command will not run inside the sandbox and the policy cannot see everything it does`,
        });
      }
      // The first part is the command as written; commands found inside it are shown as argv.
      this.addPart(isFirst ? text : renderArgv(layer.argv), isFirst ? tokens : layer.argv.tokens, all, modelled);
      isFirst = false;
      pending = [];
      for (const s of layer.effects.scripts) {
        if (s.source === null) this.lineFindings.push({ decision: "ask", rule: null, reason: `unclassifiable: ${s.via} with a command string that is not static` });
        else await this.script(s.source, cwds, scope.depth + 1, s.via);
      }
    }
  }

  private async effectFindings(layer: Layer, cwds: Cwds): Promise<Finding[]> {
    const out: Finding[] = layer.effects.floors.map((f: Floor) => ({ decision: f.decision, rule: null, reason: f.reason }));
    const name = displayName(layer.argv);
    for (const w of layer.effects.writes) out.push(...(await this.pathFindings("write", w, cwds, name)));
    const listsNames = this.ctx.boxed === true && HOME_NAME_LISTERS.has(commandName(layer.argv) ?? "") && !mayRecurse(layer.argv);
    for (const r of layer.effects.reads) {
      if (listsNames && (await this.isBoxHome(r, cwds))) continue;
      out.push(...(await this.pathFindings("read", r, cwds, name)));
    }
    if (layer.effects.gitDir !== undefined) out.push(...(await this.gitFindings(layer.effects.gitDir, cwds)));
    for (const w of layer.effects.walks ?? []) out.push(...(await this.walkFindings(w, cwds)));
    return out;
  }

  /**
   * Whether `value` names the HOME directory itself of a command that runs in the sandbox: the
   * box's own HOME, fresh for every command (lib/exec/box-home.ts: a scratch directory with the
   * kept caches and a reduced `~/.gitconfig`), so listing it reads nothing of the person's. Only
   * the directory itself counts (`~`, `~/`, `$HOME`, `"$HOME"`, `${HOME}`, `~/.`): a path under
   * it (`~/.ssh`, `~/.netrc`, `~/.cache`) is judged like any read outside the workspace, and so
   * is every read of a command that does not run boxed (the Claude Code hook's, whose `~` is
   * the person's own).
   */
  private async isBoxHome(value: string, cwds: Cwds): Promise<boolean> {
    const home = this.ctx.boxed === true && !this.ctx.envUnknown ? this.ctx.env.HOME : undefined;
    if (!home || !home.startsWith("/")) return false;
    const place = await placeOf(value, cwds, this.ctx.workspaceRoot);
    if (place.place !== "outside" || place.processLink) return false;
    const physical = await physicalPath(home);
    return place.absolute === (typeof physical === "string" ? physical : path.posix.normalize(home));
  }

  /**
   * A recursive read (`grep -r`, `rg`, `git grep`, a wildcard pathspec): the tree under its
   * starting point is walked (without following symlinks, skipping what the reader skips) and
   * every file a sensitive-path rule covers makes the part ask or deny as reading that file
   * would, naming the file and the rule. A walk over MAX_WALK_ENTRIES entries asks, since it
   * cannot be checked. Starting points outside the workspace are left to pathFindings.
   */
  private async walkFindings(walk: Walk, cwds: Cwds): Promise<Finding[]> {
    const place = await placeOf(walk.root, cwds, this.ctx.workspaceRoot);
    if (place.place !== "inside") return [];
    const hits = await sensitiveFilesUnder(place.absolute, place.relative, walk, this.rules, this.ctx.relaxed?.gitWalks === true);
    if (hits === "too_large") {
      return [{ decision: "ask", rule: null, reason: `unclassifiable: ${walk.via} reads every file under ${place.relative || "."}, more than ${MAX_WALK_ENTRIES} entries to check for sensitive files` }];
    }
    return hits.map(({ file, rule }) => ({
      decision: rule.decision,
      rule,
      reason: `${file}: ${verb(rule.decision)} by rule ${rule.id}${rule.note ? ` (${rule.note})` : ""}; ${walk.via} reads it while reading ${place.relative || "."} recursively`,
      risk: { kind: "reads_secret", text: `${walk.via} reads ${file}${rule.note ? ` (${rule.note})` : ""}` },
    }));
  }

  /** The repository git will use from `gitDir` (relative to each cwd), when it is not trusted (git-repo.ts). */
  private async gitFindings(gitDir: string | null, cwds: Cwds): Promise<Finding[]> {
    if (gitDir === null || (cwds === null && !gitDir.startsWith("/"))) {
      return [{ decision: "ask", rule: null, reason: "untrusted_repository: git runs in a directory that is not known before the command runs, so the repository it uses cannot be checked" }];
    }
    const out: Finding[] = [];
    for (const cwd of gitDir.startsWith("/") ? ["/"] : cwds!) {
      const physical = await physicalPath(path.resolve(cwd, gitDir));
      if (typeof physical !== "string" || !isInsideRoot(this.ctx.workspaceRoot, physical)) continue; // reads outside already ask
      const trust = await repositoryTrust(physical, this.ctx.workspaceRoot, this.ctx.env);
      if (!trust.trusted) {
        out.push({
          decision: "ask",
          rule: null,
          reason: `untrusted_repository: ${trust.why}`,
          risk: { kind: "runs_workspace_code", text: `git in an untrusted repository: ${trust.why}` },
        });
      }
    }
    return out;
  }

  /** Rules with a command pattern, and tool-wide rules; no match → ask. */
  private ruleFindings(argv: Argv): Finding[] {
    const name = displayName(argv);
    const out: Finding[] = [];
    const nameKnown = commandName(argv) !== null;
    for (const rule of this.rules) {
      if (rule.pathGlob && !rule.command) continue; // path rules are checked on the paths
      if (isToolRule(rule)) {
        out.push({ decision: rule.decision, rule, reason: `${name}: ${verb(rule.decision)} by rule ${rule.id}` });
        continue;
      }
      if (!nameKnown) continue; // the command already asks as unclassifiable
      const how = matchCommandPattern(commandPatternOf(rule), argv, rule.decision !== "allow");
      if (how === "match") out.push({ decision: rule.decision, rule, reason: `${name}: ${verb(rule.decision)} by rule ${rule.id}` });
      else if (how === "maybe" && rule.decision !== "allow") {
        out.push({ decision: "ask", rule, reason: `${name}: may match ${rule.decision} rule ${rule.id} when the command runs` });
      }
    }
    if (nameKnown && !out.some((f) => f.rule && f.decision === f.rule.decision)) out.push({ decision: "ask", rule: null, reason: `${name}: not on the allow list` });
    return out;
  }

  private addPart(text: string, tokens: ArgvToken[], findings: Finding[], modelled = true): void {
    let decision: Decision = "allow";
    for (const f of findings) decision = maxDecision(decision, f.decision);
    const deciding = findings.filter((f) => f.decision === decision && f.reason !== "");
    const rule = deciding.find((f) => f.rule && f.rule.decision === decision)?.rule ?? null;
    const reason = deciding.length ? visible([...new Set(deciding.map((f) => f.reason))].join("; ")) : "no effect";
    const argv = tokens.every((t) => t.value !== null && !t.glob) ? tokens.map((t) => t.value!) : null;
    this.parts.push({ text, argv, decision, rule: rule ? ruleRef(rule) : null, reason, findings, modelled });
  }

  /** The working directories after a command: `cd`/`pushd` move, `popd`/`source`/… make it unknown. */
  private cwdAfter(layers: Layer[], cwds: Cwds, scope: Scope): Outcome {
    const main = [...layers].reverse().find((l) => !l.transparent) ?? layers[layers.length - 1];
    const name = commandName(main.argv);
    if (name === null) return { ok: null, fail: null };
    if (scope.cwdChangingFunctions.has(name) || name === "popd" || name === "source" || name === "." || name === "eval") return { ok: null, fail: null };
    if (name !== "cd" && name !== "pushd") return { ok: cwds, fail: cwds };
    const args = main.argv.tokens.slice(1).filter((t) => !(t.value !== null && /^-[LPe@]+$/.test(t.value)));
    const operand = args.find((t) => t.value !== "--");
    if (isDynamicVariable("CDPATH", scope.expansion)) return { ok: null, fail: cwds };
    let target: string | null;
    if (!operand) target = name === "cd" && !scope.expansion.unknownEnv ? (scope.expansion.env.HOME ?? null) : null;
    else target = operand.value === null || operand.glob || operand.value === "-" ? null : operand.value;
    if (target === null) return { ok: null, fail: cwds };
    const t = target;
    const ok = t.startsWith("/") ? [logicalCd("/", t)] : cwds === null ? null : cwds.map((c) => logicalCd(c, t));
    return { ok, fail: cwds };
  }
}


/**
 * Reasons are shown to reviewers and agents: control, invisible and bidi characters are written
 * as `\u{…}` so a lookalike name (`ls\u{200b}`, NBSP in `rm\u{a0}x`) or a newline cannot hide.
 */
function visible(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u00a0\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

function verb(d: Decision): string {
  return d === "deny" ? "denied" : d === "ask" ? "needs approval" : "allowed";
}

function union(a: Cwds, b: Cwds): Cwds {
  if (a === null || b === null) return null;
  return [...new Set([...a, ...b])];
}

function isInsideRoot(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/** True when `cmd` may change how bash expands wildcards for the commands after it. */
function changesGlobbing(cmd: SimpleCommand, expansion: ExpansionEnv): boolean {
  if (cmd.assignments.some((a) => a.name === "GLOBIGNORE")) return true;
  const first = firstWordName(cmd, expansion);
  if (cmd.words.length && first === null) return true;
  if (first === "shopt") return true;
  if (first === "set") {
    return cmd.words.slice(1).some((w) => {
      const v = staticValue(w, expansion);
      return v === null || /^[-+][A-Za-z]*f/.test(v) || v === "-o" || v === "+o";
    });
  }
  return false;
}

/** Write, read or no file effect (fd duplications `2>&1`, closes `>&-`, heredocs). */
function redirectKind(r: ShellRedirect): "read" | "write" | "none" {
  switch (r.operator) {
    case ">":
    case ">>":
    case ">|":
    case "&>":
    case "&>>":
      return "write";
    case ">&":
      // `>&2` duplicates a descriptor; `>&file` (bash) writes stdout and stderr to a file.
      return r.target && /^\d+-?$|^-$/.test(r.target.text) ? "none" : "write";
    case "<":
      return "read";
    case "<&":
      return r.target && /^\d+-?$|^-$/.test(r.target.text) ? "none" : "read";
    default:
      return "none";
  }
}

/** Every simple command in the tree, nested substitutions and function bodies included. */
function allCommands(node: ShellNode): SimpleCommand[] {
  const out: SimpleCommand[] = [];
  const visit = (n: ShellNode): void => {
    switch (n.kind) {
      case "command":
        out.push(n);
        n.nested.forEach(visit);
        return;
      case "sequence":
      case "compound":
        n.items.forEach(visit);
        return;
      case "and":
      case "or":
        visit(n.left);
        visit(n.right);
        return;
      case "not":
      case "isolated":
      case "function":
        visit(n.body);
        return;
    }
  };
  visit(node);
  return out;
}

/** The static name of a command's first word (before wrappers), or null. */
function firstWordName(cmd: SimpleCommand, expansion: ExpansionEnv): string | null {
  const w = cmd.words[0];
  const v = w ? staticValue(w, expansion) : null;
  return v === null ? null : path.posix.basename(v);
}

function assignsAnyVariable(cmd: SimpleCommand, expansion: ExpansionEnv): boolean {
  const names = cmd.words.map((w) => staticValue(w, expansion));
  if (names.some((n) => n !== null && ASSIGNS_ANY_VARIABLE.has(path.posix.basename(n)))) return true;
  const first = firstWordName(cmd, expansion);
  if (first === "printf" && names.includes("-v")) return true;
  return (first === "declare" || first === "typeset" || first === "local") && names.some((n) => n !== null && /^-\w*n/.test(n));
}

/** True when some command under `node` may change the working directory. */
function anyCwdChange(node: ShellNode, scope: Scope): boolean {
  return allCommands(node).some((c) => {
    if (c.words.length && firstWordName(c, scope.expansion) === null) return true; // may be `cd`
    const words = c.words.map((w) => staticValue(w, scope.expansion));
    return words.some((w) => w !== null && (CHANGES_CWD.has(path.posix.basename(w)) || scope.cwdChangingFunctions.has(w)));
  });
}

/** Names of functions defined in the script whose body may change the working directory. */
function cwdChangingFunctions(root: ShellNode, expansion: ExpansionEnv): Set<string> {
  const found = new Set<string>();
  const scope: Scope = { expansion, cwdChangingFunctions: found, scriptChangesCwd: false, globOptionsChange: false, depth: 0 };
  const functions: Array<{ name: string; body: ShellNode }> = [];
  const visit = (n: ShellNode): void => {
    if (n.kind === "function") functions.push(n);
    if (n.kind === "sequence" || n.kind === "compound") n.items.forEach(visit);
    else if (n.kind === "and" || n.kind === "or") [n.left, n.right].forEach(visit);
    else if (n.kind === "not" || n.kind === "isolated" || n.kind === "function") visit(n.body);
  };
  visit(root);
  // Repeat until stable: a function that calls a cwd-changing function changes it too.
  for (let changed = true; changed; ) {
    changed = false;
    for (const f of functions) {
      if (!found.has(f.name) && anyCwdChange(f.body, scope)) {
        found.add(f.name);
        changed = true;
      }
    }
  }
  return found;
}

/** The command as reasons name it: `rm`, `git logout`, `/usr/bin/curl`. */
/**
 * Programs that, given a directory, read only the names and metadata of its own entries, never a
 * file's content nor the tree below (`ls ~`, `ls -la ~`, `stat ~`): given the box's own HOME
 * (`isBoxHome`), they read nothing secret. Content readers (cat, grep, tar, cp …) and tree
 * walkers (du, tree, find, `ls -R`: see `mayRecurse`) are not among them.
 */
const HOME_NAME_LISTERS: ReadonlySet<string> = new Set(["ls", "dir", "vdir", "stat"]);

/**
 * Whether an ls-like command may list recursively: `--recursive` (or an abbreviation, `--rec…`)
 * or an `R` anywhere in a bundle of short options before `--`. An `R` that is really the value
 * of another option (`-IR*`) also counts: the answer errs on the side of judging the read.
 */
function mayRecurse(argv: Argv): boolean {
  for (const t of argv.tokens.slice(1)) {
    const v = t.value;
    if (v === null) return true;
    if (v === "--") return false;
    if (v.startsWith("--rec") || (/^-[^-]/.test(v) && v.includes("R"))) return true;
  }
  return false;
}

function displayName(argv: Argv): string {
  const [first, second] = argv.tokens;
  if (!first || first.value === null) return "(command not static)";
  const base = path.posix.basename(first.value);
  if (SUBCOMMAND_PROGRAMS.has(base) && second?.value && !second.value.startsWith("-")) return `${first.value} ${second.value}`;
  return first.value;
}

/** argv shown for a command found inside another one (`xargs touch` → `touch`). */
function renderArgv(argv: Argv): string {
  const words = argv.tokens.map((t) => (t.value === null ? "…" : /^[\w@%+=:,./-]+$/.test(t.value) ? t.value : `'${t.value.replace(/'/g, `'\\''`)}'`));
  return words.join(" ") + (argv.openEnded ? " …" : "");
}
