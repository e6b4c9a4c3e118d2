import type { Decision, PolicyRuleData } from "@/lib/policy/types";

/**
 * The rules a new installation starts with (seeded into the PolicyRule table by
 * lib/policy/rule-store.ts; ids are stable so a re-seed never duplicates or overrides an operator's
 * change). Nothing is denied by default: risky calls ask a reviewer.
 *
 * How they combine (lib/policy/decide.ts): among matching rules deny beats ask beats allow, and
 * a call no rule matches asks. So the sensitive-path rules below make even reads of those files
 * ask, and a shell command that is not on the read-only list asks because no rule allows it.
 * The read-only shell list is further limited by built-in checks that no rule can lift:
 * `find -exec/-delete`, `sed -i` or `sed` scripts with w/e, `git -c`, `--output` options (in any
 * abbreviation; unknown or ambiguous long options ask), redirections (`> file`), reads outside the
 * workspace (also through wildcards, `/proc/PID/root`-like paths and file-reading options such as
 * `grep -f` or `curl -d @file`), git in a repository the policy cannot trust, and environment
 * dumps all ask (or deny, for writes outside the workspace). A command that will not run inside
 * the sandbox is allowed only when the policy models everything it does (decide.ts).
 */

/** Priority bands: lower runs (and is shown) first. */
const SENSITIVE = 10;
const TOOLS = 100;
const SHELL = 200;

function rule(id: string, priority: number, tool: string, match: { pathGlob?: string; command?: string }, decision: Decision, note: string): PolicyRuleData {
  return { id, priority, tool, pathGlob: match.pathGlob ?? null, command: match.command ?? null, decision, note, enabled: true };
}

/**
 * Files that hold secrets or repository internals: every tool asks, reads included, and the
 * sandbox shows the secret ones (all but `.git`) empty (lib/exec/workspace-secrets.ts). Dotenv
 * templates (`.env.example`, `.env.sample`, `.env.template`, also `.env.local.example`) are
 * documentation a project commits, so they are not sensitive. These globs match ignoring letter
 * case (`.ENV`, `SERVER.KEY`, `ID_RSA`: lib/policy/rule-match.ts ruleGlobMatches).
 */
export const SENSITIVE_PATHS: Array<[id: string, glob: string, note: string]> = [
  ["env", ".env!(*.example|*.sample|*.template)", "dotenv files hold credentials"],
  ["env-nested", "**/.env!(*.example|*.sample|*.template)", "dotenv files hold credentials"],
  ["git-dir", ".git/**", "repository internals (hooks and config can run programs)"],
  ["git-dir-nested", "**/.git/**", "repository internals of nested repositories"],
  ["pem", "**/*.pem", "certificates and private keys"],
  ["key", "**/*.key", "private keys"],
  ["ssh-keys", "**/id_{rsa,dsa,ecdsa,ed25519}*", "SSH private keys"],
  [
    "ssh-keys-named",
    // Keys ssh-keygen wrote under another name (`-f deploy_rsa`) and host keys; never the `.pub` half,
    // and no name with an extension (`parse_rsa.go` is a source file).
    "**/{*_{rsa,dsa,ecdsa,ed25519}{,_sk},ssh_host_*_key}",
    "SSH private keys under other names, and host keys",
  ],
  ["ssh-dir", "**/.ssh/**", "SSH configuration and keys"],
  ["keystores", "**/*.{p12,pfx,jks,keystore}", "key stores"],
  ["vpn-profiles", "**/*.ovpn", "VPN profiles embed client keys and certificates"],
  [
    "pgp-private-keys",
    // Only private keyrings and exports named as such: a plain `*.asc` is usually a public
    // signature or key a project publishes.
    "**/{secring.*,*secret*.asc,*private*.asc,*secret*.gpg,*private*.gpg,*.sec.asc,.gnupg/**}",
    "PGP private keys and keyrings",
  ],
  ["netrc", "**/{.netrc,.npmrc,.pypirc}", "files that commonly hold registry or login tokens"],
  ["cloud-credentials", "**/{.aws,.gcloud,.azure,.kube}/**", "cloud credentials"],
  [
    "credential-files",
    "**/{.pgpass,.git-credentials,credentials.json,client_secret*.json,service-account*.json,*.tfvars,*.tfvars.json,*.tfstate,*.tfstate.backup,.dev.vars,*.p8,*.ppk,*.kdbx,.docker/config.json,.m2/settings.xml,.gradle/gradle.properties,.vault-token,.htpasswd,.s3cfg,.boto,.my.cnf,.terraformrc,terraform.rc}",
    "files that commonly hold database, cloud, registry or deploy credentials",
  ],
  [
    "package-credentials",
    // The files package managers and forge CLIs keep their tokens in, and nothing else: a file the
    // tool needs in order to run stays readable in the box even when it may hold a token too
    // (`.yarnrc.yml` names the Yarn release to run, `.bundle/config` where Bundler installed the
    // gems; both are runs-later files, so changing them asks).
    "**/{auth.json,.cargo/credentials,.cargo/credentials.toml,.gem/credentials,.config/gh/hosts.yml,.config/hub,.config/glab-cli/config.yml,.pub-cache/credentials.json,pub-credentials.json,.config/pypoetry/auth.toml,.terraform.d/credentials.tfrc.json,.dockercfg,.sentryclirc}",
    "package registry and forge tokens: Composer's auth.json, Cargo, RubyGems, gh, hub, glab, pub, Poetry, Terraform Cloud, Docker, Sentry",
  ],
  [
    "kubeconfig",
    "**/{kubeconfig,kubeconfig.{yml,yaml,json},*.kubeconfig,*.kubeconfig.{yml,yaml},*[-_]kubeconfig,*[-_]kubeconfig.{yml,yaml},kubeconfig[-_]*.{yml,yaml}}",
    "Kubernetes client configurations hold cluster tokens and client keys",
  ],
  [
    "secret-files",
    // Named as secrets: `secrets.yml`, `app-secrets.json`, `secrets.dev.yaml`, `db_secret.toml`,
    // `.secrets` (act), `.secrets.toml` (Dynaconf), `.streamlit/secrets.toml`; not `secret-scan.yml`
    // (the word must end the name before its extensions) nor `.secrets.baseline` (detect-secrets'
    // hashes, which its hook needs).
    "**/{{,*[._-]}secret{,s}{,.*}.{yml,yaml,json,toml},.secrets,{serviceAccountKey,service_account}*.json}",
    "files named as secrets, and cloud service-account keys",
  ],
  [
    "secret-copies",
    // (`[.]` rather than `..`, which a brace list reads as a range)
    "**/{?*.env,env.backup,env.bak,#.env*#,.env*.sw[a-z],.[.]env*.sw[a-z],.env*~,*.pem.{bak,old,orig,save,tmp,sw[a-z]},.*.pem.sw[a-z],*.key.{bak,old,orig,save,tmp},.*.key.sw[a-z],.id_{rsa,dsa,ecdsa,ed25519}*.sw[a-z],#id_{rsa,dsa,ecdsa,ed25519}*#}",
    "backup, swap and autosave copies of secret files hold the same secrets",
  ],
];

/** Read-only shell commands allowed without review (patterns: command-pattern.ts). */
const READ_ONLY_COMMANDS: Array<[id: string, pattern: string]> = [
  ["ls", "ls *"],
  ["cat", "cat *"],
  ["head", "head *"],
  ["tail", "tail *"],
  ["wc", "wc *"],
  ["grep", "grep *"],
  ["rg", "rg *"],
  ["find", "find *"],
  ["git-status", "git status *"],
  ["git-diff", "git diff *"],
  ["git-log", "git log *"],
  ["git-show", "git show *"],
  ["echo", "echo *"],
  ["pwd", "pwd *"],
  // Changing directory runs nothing; the shell policy follows it, so the paths of the commands
  // after it are judged from where it leads (`cd .. && rm x` is judged as rm of ../x).
  ["cd", "cd *"],
  ["pushd", "pushd *"],
  ["popd", "popd *"],
  ["sed-n", "sed -n *"],
  ["stat", "stat *"],
  ["file", "file *"],
  ["du", "du *"],
  ["tree", "tree *"],
  ["which", "which *"],
  ["true", "true *"],
];

/** The default policy table, in priority order (see the file comment for how rules combine). */
export const DEFAULT_RULES: readonly PolicyRuleData[] = [
  // Sensitive paths: ask for every tool, reads included (tool "*").
  ...SENSITIVE_PATHS.map(([id, glob, note]) => rule(`default:sensitive-${id}`, SENSITIVE, "*", { pathGlob: glob }, "ask", note)),

  // Reading, listing and searching the workspace.
  rule("default:read-tools", TOOLS, "read_file", {}, "allow", "reads are fenced to the workspace"),
  rule("default:list-tools", TOOLS, "list_directory", {}, "allow", "listings are fenced to the workspace"),
  rule("default:search-tools", TOOLS, "search_files", {}, "allow", "search is fenced to the workspace"),
  rule("default:list-backups", TOOLS, "list_backups", {}, "allow", "lists stored backups"),
  rule("default:get-call", TOOLS, "get_call", {}, "allow", "reads the result of an earlier call"),
  rule("default:transform", TOOLS, "transform", {}, "allow", "converts data; @file input is fenced"),

  // Changes to files wait for a reviewer, who sees the diff.
  rule("default:write-file", TOOLS, "write_file", {}, "ask", "writes are reviewed as a diff"),
  rule("default:edit-file", TOOLS, "edit_file", {}, "ask", "edits are reviewed as a diff"),
  rule("default:restore-backup", TOOLS, "restore_backup", {}, "ask", "a restore is a write"),

  // The network.
  rule("default:fetch-url", TOOLS, "fetch_url", {}, "ask", "outbound requests are reviewed"),

  // The shell: a read-only allow-list; any other command asks (no rule matches it).
  ...READ_ONLY_COMMANDS.map(([id, pattern]) => rule(`default:sh-${id}`, SHELL, "run_command", { command: pattern }, "allow", "read-only command")),
];
