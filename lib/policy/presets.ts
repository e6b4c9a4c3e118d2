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
 *   things run, lock files included) and except large deletions or rewrites (`LARGE_CHANGE`), which ask. run_command
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

/** A glob matching any of `names` (picomatch globs themselves) at any depth. */
function anyOf(...names: string[]): string {
  return names.length === 1 ? `**/${names[0]}` : `**/{${names.join(",")}}`;
}

/** Every spelling a tool's configuration may take: `<name>.<ext>` for the extensions a tool loads. */
const CODE_EXTS = "{js,cjs,mjs,ts,cts,mts}";
const DATA_EXTS = "{json,json5,jsonc,yml,yaml,toml}";

/**
 * Files that run later, with the rights of whoever triggers them and outside the sandbox, or that
 * change how things run: CI configurations, git hook managers, build files, package scripts and
 * lock files, direnv, editor task and launch files, interpreter and shell start-up files. Globs
 * are picomatch (`dot: true`), matched against canonical workspace-relative paths. Repository
 * internals (`.git/hooks`, `.git/config`, …) are covered by the sensitive-path rules and by the
 * git checks (lib/effects/git-danger.ts, `insideGitDirectory` in decide.ts), so they are not
 * listed here; the configuration of other version-control systems (`.hg/hgrc`, `.jj/`, `.sl/`,
 * Fossil's checkout file) is (`other-vcs`). Subversion is left out: a working copy's `.svn` holds
 * no setting that runs a program (diff and editor commands, and hooks, are the user's or the
 * server's), only URLs its next update fetches from.
 *
 * The list is kept by families, grouped by what runs them, and each family names every spelling
 * its tools read (`.yml` and `.yaml`, dot-prefixed, `rc` and `-local` variants, directories): a
 * name left out is a file the agent may change without a reviewer. It leaves out what only the
 * person's own run of the project executes (sources, tests, scripts a runs-later file already
 * names): those are code the person chose to run, reviewed as ordinary changes.
 *
 * One list serves both halves: the balanced and autonomous presets ask before write_file,
 * edit_file or restore_backup change a matching file, and a command's change set that touches
 * one is held for a reviewer (lib/effects/stage.ts).
 */
export const RUNS_LATER_PATHS: ReadonlyArray<readonly [id: string, glob: string, note: string]> = [
  // CI of every forge: run on push or on a pull request, with the repository's secrets.
  ["github-workflows", "**/.github/workflows/**", "GitHub Actions workflows run in CI with the repository's secrets"],
  ["github-actions", anyOf(".github/actions/**", "action.yml", "action.yaml"), "local GitHub Actions run in CI"],
  // Gitea and Forgejo Actions read their own directories exactly as GitHub reads .github/workflows.
  ["forge-workflows", anyOf("{.gitea,.forgejo}/{workflows,actions}/**"), "Gitea and Forgejo Actions workflows run in CI with the repository's secrets"],
  ["gitlab-ci", anyOf(".gitlab-ci.yml", ".gitlab-ci.yaml", ".gitlab-ci/**", ".gitlab/ci/**", "*.gitlab-ci.yml", "*.gitlab-ci.yaml"), "GitLab CI configuration"],
  ["circleci", "**/.circleci/**", "CircleCI configuration"],
  ["azure-pipelines", anyOf("azure-pipelines*.yml", "azure-pipelines*.yaml", ".azure-pipelines/**", ".azuredevops/**"), "Azure Pipelines configuration"],
  ["jenkins", anyOf("Jenkinsfile*", "*.jenkinsfile", "*.Jenkinsfile"), "Jenkins pipelines"],
  [
    "other-ci",
    anyOf(
      ".travis.yml", // Travis CI
      ".drone.yml", ".drone.yaml", ".drone.jsonnet", ".drone.star", // Drone
      ".woodpecker/**", ".woodpecker.yml", ".woodpecker.yaml", // Woodpecker
      "bitbucket-pipelines.yml", // Bitbucket Pipelines
      ".buildkite/**", "buildkite.yml", "buildkite.yaml", "buildkite.json", // Buildkite
      "appveyor.yml", ".appveyor.yml", // AppVeyor
      "cloudbuild.yaml", "cloudbuild.yml", "cloudbuild.json", // Google Cloud Build
      ".cirrus.yml", ".cirrus.star", // Cirrus CI
      ".build.yml", ".builds/**", // sourcehut builds
      ".semaphore/**", // Semaphore
      "bitrise.yml", "bitrise.yaml", // Bitrise
      "buildspec*.yml", "buildspec*.yaml", // AWS CodeBuild
      "codemagic.yaml", "codemagic.yml", // Codemagic
      "codefresh.yml", "codefresh.yaml", // Codefresh
      ".teamcity/**", // TeamCity (Kotlin DSL)
      ".tekton/**", // Tekton (Pipelines as Code)
      ".harness/**", // Harness
      "wercker.yml", // Wercker
      ".zuul.yaml", "zuul.yaml", ".zuul.d/**", "zuul.d/**", // Zuul
      ".onedev-buildspec.yml", // OneDev
      "Dangerfile*", "dangerfile.*", // Danger runs in CI
    ),
    "CI configuration runs on the next push with the repository's secrets",
  ],
  // Hosted builds and deploys: the platform runs their build and hook commands on the next push.
  [
    "hosted-builds",
    anyOf(
      "netlify.toml", "vercel.json", "now.json", ".vercel/**", "amplify.yml", "amplify.yaml",
      "app.json", "app.yaml", "fly.toml", "render.yaml", "railway.json", "railway.toml", "nixpacks.toml", "Procfile", "Procfile.*",
      ".platform.app.yaml", ".platform/**", ".upsun/**", ".ebextensions/**", "Pulumi.yaml", "Pulumi.*.yaml",
      "*.tf", "*.tf.json", "*.tofu", "terragrunt.hcl", ".terraformrc", "terraform.rc", "ansible.cfg",
    ),
    "hosted build and deploy configuration, and infrastructure code (Terraform's external data sources run on plan), run commands on the next push, deploy or plan",
  ],
  // Cloud IDEs and workspace managers: run their tasks when someone opens the workspace.
  [
    "workspace-open",
    anyOf(
      ".gitpod.yml", ".gitpod.yaml", ".gitpod.Dockerfile", ".gitpod/**", ".replit", "replit.nix", ".idx/**", "devfile.yaml", ".devfile.yaml",
      ".codesandbox/**", "sandbox.config.json", ".stackblitzrc", ".lando.yml", ".lando.*.yml", ".ddev/**", "devenv.nix", "devenv.yaml", "devbox.json",
    ),
    "cloud IDE and workspace definitions run their tasks when the workspace is opened",
  ],
  // Git hook managers: every spelling each one reads; their hooks run on the next commit or push.
  [
    "git-hook-managers",
    anyOf(
      ".husky/**", ".huskyrc*", "husky.config.*", // husky (v4 reads .huskyrc*, later versions .husky/)
      ".pre-commit-config.yaml", ".pre-commit-config.yml", ".pre-commit-hooks.yaml", // pre-commit
      "lefthook*", ".lefthook*", ".lefthook*/**", // lefthook: {,.}lefthook{,-local}.{yml,yaml,json,jsonc,toml} and its script directories
      "simple-git-hooks*", ".simple-git-hooks*", // simple-git-hooks
      ".overcommit.yml", // overcommit
      ".lintstagedrc*", "lint-staged.config.*", // lint-staged
      ".commitlintrc*", "commitlint.config.*", ".czrc", ".cz.json", ".cz.toml", "cz.json", "cog.toml", // commit-message hooks
      ".githooks/**", ".git-hooks/**", ".hooks/**",
      "captainhook.json", // CaptainHook (PHP): its actions are shell commands
      "grumphp.yml", "grumphp.yaml", "grumphp.yml.dist", "grumphp.yaml.dist", "grumphp.dist.yml", "grumphp.dist.yaml", // GrumPHP installs hooks; its `shell` tasks run commands
      "hk.pkl", "hk.local.pkl", ".hk.pkl", ".config/hk.pkl", // hk
      ".rusty-hook.toml", "rusty-hook.toml", ".cargo-husky/**", // rusty-hook, cargo-husky
    ),
    "git hooks installed by a hook manager run on the next commit",
  ],
  // Release tools: their configuration names shell commands the person's next release runs.
  [
    "release-tools",
    anyOf(
      ".versionrc", ".versionrc.*", // standard-version, commit-and-tag-version (`scripts` hooks)
      ".release-it.*", // release-it (`hooks`): .json, .js, .cjs, .mjs, .ts, .yml, .yaml, .toml
      ".goreleaser.yml", ".goreleaser.yaml", "goreleaser.yml", "goreleaser.yaml", // GoReleaser (`before.hooks`, builds' hooks)
      ".bumpversion.cfg", ".bumpversion.toml", // bump-my-version (setup, pre- and post-commit hooks)
      "cliff.toml", // git-cliff (commit preprocessors with `replace_command`)
      "knope.toml", // knope (`Command` steps)
    ),
    "release tool configuration runs its hooks and commands on the person's next release",
  ],
  // Governance: who must review, and what updates or merges by itself.
  [
    "governance",
    anyOf(
      "CODEOWNERS", // GitHub reads .github/, the root and docs/; GitLab also .gitlab/
      "renovate.json", "renovate.json5", ".renovaterc", ".renovaterc.json", ".renovaterc.json5", // Renovate: root, .github/ and .gitlab/
      ".github/dependabot.yml", ".github/dependabot.yaml", // Dependabot (may allow external code execution)
      ".github/settings.yml", // the Settings app rewrites branch protection from it
      ".mergify.yml", ".mergify/config.yml", ".github/mergify.yml", // Mergify merges by these rules
    ),
    "review and automation rules: who must approve a change, and which updates merge by themselves",
  ],
  // git itself: filter and diff drivers, submodule URLs and config run or fetch on the next checkout, diff or fetch.
  ["git-files", anyOf(".gitattributes", ".gitmodules", ".gitconfig", ".lfsconfig"), "git attributes, submodules and config files change what git runs and fetches"],
  // Other version-control systems: each reads its repository's configuration on every command, found
  // by the directory's name at any depth (`sub/.hg/hgrc` is the repository of whoever runs hg in sub/).
  // Listed here rather than as secrets: the box must still read them for hg or jj to work there.
  [
    "other-vcs",
    anyOf(
      ".hg/hgrc", ".hg/hgrc-not-shared", // Mercurial: `[hooks]` run on every command, `[extensions]` load Python from a path
      ".hg/sharedpath", ".hg/requires", ".hg/store/requires", // …read from the repository these name (share, share-safe)
      ".hgsub", ".hgsubstate", // Mercurial subrepositories run git, svn or hg against the sources they name
      ".sl/**", // Sapling: .sl/config like hgrc, and its redirects
      ".jj/**", // Jujutsu: .jj/repo/config.toml sets the pager, diff editor and `jj fix` commands; .jj/repo/store names its git store
      "_FOSSIL_", ".fslckout", // Fossil's checkout database names the repository whose settings (hooks, ssh and diff commands) apply
      ".bzr/branch/branch.conf", ".bzr/branch/location", // Breezy: branch configuration, and a lightweight checkout's redirect
      "_darcs/prefs/**", // Darcs: `ALL prehook` in prefs/defaults runs before every darcs command
      ".pijul/**", // Pijul: its repository config has hooks run by `pijul record`
    ),
    "other version-control systems' repository configuration runs hooks, extensions and programs on the person's next hg, sl, jj, fossil or brz command",
  ],
  // What chooses the interpreter or the package index a project's next command uses: pyenv, pdm
  // and uv read .python-version / .pdm-python (a name, or with uv a path, of the python to run);
  // Poetry's and uv's project settings and pip.conf (a virtual environment's own included) name
  // the index the next install fetches from; Trunk's and Test Kitchen's files run linters and
  // provisioners; a package directory named like a start-up module (`conftest/__init__.py`)
  // is imported instead of the module file beside it.
  [
    "interpreter-and-index",
    anyOf(
      ".python-version", ".pdm-python", "poetry.toml", "uv.toml", "pip.conf", "pip.ini", ".trunk/trunk.yaml", ".kitchen.yml", ".kitchen.yaml", "kitchen.yml", "kitchen.yaml",
      "{conftest,sitecustomize,usercustomize,noxfile,fabfile,dodo,pavement,setup}/__init__.py",
    ),
    "chooses the interpreter, the package index or the module the person's next command runs",
  ],
  // Package managers: manifests whose scripts run on install, their settings and plugins.
  // npm, pnpm, Yarn and bun run the scripts of package.json (pnpm also reads package.yaml and package.json5).
  ["package-json", anyOf("package.json", "package.json5", "package.yaml"), "package scripts (install, test, prepare…) run on the next npm install or npm test"],
  [
    "package-managers",
    anyOf(
      ".npmrc", ".yarnrc", ".yarnrc.yml", ".yarn/plugins/**", ".yarn/releases/**", ".yarn/patches/**", ".pnp.cjs", ".pnp.js", ".pnp.loader.mjs", ".pnp.data.json", // npm, Yarn (PnP's runtime is plain code)
      ".pnpmfile.cjs", ".pnpmfile.mjs", "pnpmfile.js", "pnpm-workspace.yaml", "patches/*.patch", // pnpm, patch-package
      "bunfig.toml", "deno.json", "deno.jsonc", "import_map.json", // bun, deno
      "composer.json", // PHP: scripts run on composer install
      "Gemfile", "gems.rb", "*.gemspec", ".bundle/config", // Ruby
      "Pipfile", "requirements*.txt", "requirements/*.txt", "constraints*.txt", "environment.yml", "environment.yaml", "pixi.toml", "hatch.toml", "pdm.toml", ".pdm.toml", // Python
      ".cargo/**", "build.rs", "Cargo.toml", "rust-toolchain", "rust-toolchain.toml", // Rust (a toolchain `path` runs that rustc)
      "go.work", // Go workspaces point every go command at other module directories
      "go.mod", // `replace` swaps a dependency for another module or a local directory (its init() runs in every go test), `toolchain` picks the Go that runs, `tool` adds programs `go tool` runs
      "pubspec.yaml", "pubspec_overrides.yaml", // Dart, Flutter (dependency_overrides to a path)
      "vcpkg.json", "vcpkg-configuration.json", // vcpkg: ports and overlay ports are CMake scripts the build runs
      "conanfile.py", "conanfile.txt", // Conan: conanfile.py is Python run by conan install
      "dub.json", "dub.sdl", // D (preBuildCommands)
      "*.opam", "opam", // OCaml (build and install commands)
      "packages.config", "paket.dependencies", // NuGet, Paket
      "mix.exs", "rebar.config", "rebar.config.script", // Elixir, Erlang
      "Package.swift", "Podfile", "*.podspec", "Cartfile", "Mintfile", "Fastfile", "fastlane/**", "*.xcodeproj/**", "*.xcworkspace/**", // Swift, CocoaPods, fastlane, Xcode build phases
      "Makefile.PL", "Build.PL", "cpanfile", "dist.ini", // Perl
      "*.cabal", "Setup.hs", "Setup.lhs", "stack.yaml", "cabal.project", "cabal.project.local", // Haskell
      "*.rockspec", "*.nimble", "shard.yml", "build.zig", "build.zig.zon", "deps/build.jl", "hook/build.dart", "hook/link.dart", // Lua, Nim, Crystal, Zig, Julia, Dart
      "project.clj", "deps.edn", "bb.edn", // Clojure
    ),
    "package manager manifests and settings run code or fetch what runs on the next install or build",
  ],
  // Lock files: the next install (`npm ci`, `cargo build`, `bundle install`) fetches what they name,
  // and a changed source or checksum installs, and runs the install scripts of, a package the agent chose.
  [
    "lockfiles",
    anyOf(
      "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lock", "bun.lockb", "deno.lock",
      "composer.lock", "Gemfile.lock", "gems.locked", "Cargo.lock", "poetry.lock", "Pipfile.lock", "pdm.lock", "uv.lock", "pixi.lock", "conda-lock.yml",
      "go.work.sum", "mix.lock", "rebar.lock", "Podfile.lock", "Package.resolved", "Cartfile.resolved", "pubspec.lock", "packages.lock.json", "paket.lock",
      "gradle.lockfile", "*.lockfile", "go.sum", "gradle/*.versions.toml", "gradle/verification-metadata.xml", "gradle/verification-keyring.*", "flake.lock", ".terraform.lock.hcl", "renv.lock", "cpanfile.snapshot", "Manifest.toml", "stack.yaml.lock", "cabal.project.freeze", "shard.lock",
    ),
    "lock files pin what the next install fetches: a changed source or checksum installs, and runs the install scripts of, another package",
  ],
  // Build systems: build files are programs the next build runs.
  ["makefiles", anyOf("Makefile", "makefile", "GNUmakefile", "*.mk", "*.make", "Makefile.am", "Makefile.in"), "Makefiles run whatever they name on the next make"],
  // Build systems of every language: configure scripts, build definitions and the files every project build imports.
  [
    "build-systems",
    anyOf(
      "configure", "configure.ac", "configure.in", "autogen.sh", "aclocal.m4", // autotools
      "CMakeLists.txt", "*.cmake", "CMakePresets.json", "CMakeUserPresets.json", "meson.build", "meson.options", "meson_options.txt", "SConstruct", "SConscript", "wscript", "premake5.lua", "xmake.lua",
      "BUILD", "BUILD.bazel", "WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel", "*.bzl", ".bazelrc", ".bazelversion", "BUCK", ".buckconfig",
      "pom.xml", ".mvn/**", "mvnw", "mvnw.cmd", "build.xml", // Maven, Ant
      "*.gradle", "*.gradle.kts", "gradle.properties", "gradlew", "gradlew.bat", "gradle/wrapper/**", "buildSrc/**", // Gradle (gradle.properties may set JVM agents)
      "build.sbt", "project/*.sbt", "project/*.scala", "project/build.properties", ".sbtopts", ".jvmopts", "build.sc", "build.mill", // sbt, mill
      "Directory.Build.props", "Directory.Build.targets", "Directory.Build.rsp", "Directory.Packages.props", "Directory.Solution.props", "Directory.Solution.targets",
      "*.csproj", "*.fsproj", "*.vbproj", "*.proj", "*.props", "*.targets", "global.json", "NuGet.config", "nuget.config", "NuGet.Config", ".config/dotnet-tools.json", // MSBuild imports these into every build
      "Earthfile", "Tiltfile", "skaffold.yaml", "docker-bake.hcl", "docker-bake.json",
      "BSDmakefile", // bmake reads it before Makefile
      "*.ninja", // ninja: build.ninja and every file it includes run their `command`
      "SConstruct.py", "SConscript.py", // SCons reads these like SConstruct
      "dune", "dune-project", "dune-workspace", // dune rules run actions
      "BUILD.gn", "*.gni", ".gn", // GN
      "Jamfile", "Jamroot", "*.jam", // Boost.Build
      "Tupfile", "Tuprules.tup", "*.tup", // tup
      "pants.toml", ".plzconfig", // Pants, Please
      ".bazeliskrc", // Bazelisk: which bazel binary (or download URL) every bazel command runs
      "buf.gen*.yaml", "buf.gen*.yml", // buf generate runs `local:` plugins
      ".projenrc.*", // projen runs .projenrc.ts/.js/.py/.json on every `npx projen`
      "build.fsx", "*.cake", "psakefile.ps1", "*.build.ps1", // FAKE, Cake, psake, Invoke-Build
    ),
    "build files are programs the next build runs",
  ],
  // Task runners, containers and environments: run what they name on the next task, container build or shell.
  [
    "task-runners",
    anyOf(
      "[Jj][Uu][Ss][Tt][Ff][Ii][Ll][Ee]", ".[Jj][Uu][Ss][Tt][Ff][Ii][Ll][Ee]", "*.just", // just finds its justfile in any letter case
      "[Tt]askfile*.yml", "[Tt]askfile*.yaml", ".mise.toml", "mise.toml", "mise.*.toml", ".mise.*.toml", ".mise/**", "mise/**", ".config/mise.toml", ".config/mise/**", "mise-tasks/**", ".mise-tasks/**", ".rtx.toml", ".tool-versions",
      "Vagrantfile", "flake.nix", "shell.nix", "default.nix", "Brewfile", "Dockerfile", "Dockerfile.*", "*.dockerfile", "Containerfile", "docker-compose*.yml", "docker-compose*.yaml", "compose.yml", "compose.yaml", "compose.*.yml", "compose.*.yaml",
      "tasks.py", "tasks/__init__.py", "invoke.yaml", "invoke.yml", "invoke.json", "invoke.py", "pavement.py", // invoke (searched upward from the current directory), Paver
      "Capfile", "config/deploy.rb", "config/deploy/*.rb", "Thorfile", "*.thor", // Capistrano, Thor
      "Makefile.toml", // cargo-make
      "devspace.yaml", "devspace.yml", // DevSpace (hooks, pipelines)
      ".sdkmanrc", // SDKMAN! env picks the Java and tools every shell here runs
      "Rakefile", "rakefile", "Rakefile.rb", "*.rake", "Guardfile", "Gruntfile.*", "gulpfile.*", "Gulpfile.*", "Jakefile", "Jakefile.*", "Cakefile", "Snakefile", "dodo.py", "fabfile.py", "noxfile.py", "moon.yml", ".moon/**",
    ),
    "task runners, containers and environments run what they name",
  ],
  // Interpreter and debugger start-up files: run whenever that interpreter or debugger starts here.
  // Python: build backends, pytest plugins and the interpreter's own start-up hooks.
  ["python-hooks", anyOf("setup.py", "setup.cfg", "pyproject.toml", "tox.ini", "conftest.py", "pytest.ini", "sitecustomize.py", "usercustomize.py", "*.pth"), "Python build files, test plugins and start-up hooks run on the next install, test run or interpreter start"],
  [
    "startup-files",
    anyOf(
      ".pythonrc", ".pythonrc.py", ".pythonstartup", ".pdbrc", ".pdbrc.py", "ipython_config.py", "ipython_kernel_config.py", "jupyter_*config.py", "jupyter_*config.json", // Python, pdb, IPython, Jupyter
      ".pryrc", ".irbrc", ".gemrc", ".rspec", ".rspec-local", ".simplecov", ".iex.exs", ".formatter.exs", // Ruby, Elixir
      ".Rprofile", "Rprofile.site", ".Renviron", "renv/activate.R", ".perldb", // R, Perl's debugger
      ".gdbinit", "gdbinit", "*-gdb.py", "*-gdb.gdb", ".lldbinit", // gdb, lldb
      ".inputrc",
      // REPLs that read a start-up file from the current directory
      ".ghci", // GHCi (`:!` lines run shell commands)
      ".ocamlinit", // ocaml and utop toplevels
      ".octaverc", // Octave
      "startup.m", // MATLAB
      ".erlang", // erl
      "config/*.exs", // Elixir: every `mix` run evaluates config/config.exs and what it imports
    ),
    "interpreter and debugger start-up files run as code whenever that interpreter or debugger starts",
  ],
  // Linters, formatters, test runners and compilers whose configuration loads plugins or code.
  [
    "tool-configs",
    anyOf(
      `*.config.${CODE_EXTS}`, `*.config.${DATA_EXTS}`, // every tool's `<tool>.config.*` (build, bundler, test, lint)
      ".eslintrc*", ".prettierrc*", ".stylelintrc*", ".babelrc*", ".postcssrc*", ".mocharc*", ".nycrc*", ".c8rc*", ".releaserc*", ".remarkrc*", ".textlintrc*", ".markdownlint-cli2.*", ".oxlintrc.json", ".swcrc",
      "karma.conf.*", "cypress.json", "tsconfig.json", "tsconfig.*.json", "jsconfig.json", "vitest.workspace.*", "nodemon.json",
      ".pylintrc", "pylintrc", ".flake8", "mypy.ini", ".mypy.ini", ".coveragerc", ".sqlfluff", // Python linters load plugins (pylint's init-hook is code)
      ".rubocop*.yml", ".php-cs-fixer*.php", ".php_cs", ".php_cs.dist", "phpstan.dist.neon", "psalm.xml.dist", // php-cs-fixer v2 config is PHP code; PHPStan's `bootstrapFiles`
      "phpcs.xml", "phpcs.xml.dist", ".phpcs.xml", ".phpcs.xml.dist", "ecs.php", "infection.json", "infection.json5", "infection.json.dist", // PHP_CodeSniffer's `autoload`, ECS, Infection's bootstrap
      "phpunit.xml", "phpunit.xml.dist", "phpstan.neon", "phpstan.neon.dist", "rector.php", "psalm.xml", ".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json",
      ".storybook/**", "nx.json", "project.json", "turbo.json", "lerna.json", "rush.json",
    ),
    "tool configuration that loads code or plugins when the tool (build, lint, format, test) starts, including an editor's format-on-save",
  ],
  // Installed programs: run when a package script, a virtual environment or the interpreter starts.
  [
    "installed-programs",
    anyOf(
      "node_modules/.bin/**", "{.venv,venv,.tox/*,.nox/*,.direnv/*}/bin/**", "{.venv,venv,.tox/*,.nox/*,.direnv/*}/lib/*/site-packages/{*.pth,sitecustomize.py,usercustomize.py}", "vendor/bin/**",
      "pyvenv.cfg", // any virtual environment's: its `home` chooses the interpreter and the whole standard library its python runs
      "{.venv,venv}/pip.{conf,ini}", // pip in an active environment reads $VIRTUAL_ENV/pip.conf: the index the next install fetches from
    ),
    "installed programs and start-up hooks run when a package script or the interpreter starts",
  ],
  // Compiled code an interpreter loads instead of the source beside it, when a header or key the
  // writer can forge matches (the reviewed source reads clean; the cache runs): Python bytecode
  // (`__pycache__/<mod>.<tag>.pyc`, a lone `mod.pyc` imported as `mod`), bootsnap's Ruby caches;
  // and native modules, which Python tries before `mod.py` (`mod.cpython-311-x86_64-linux-gnu.so`,
  // `mod.abi3.so`, `mod.pyd`: a `conftest.*.so` runs at the person's next pytest) and Node loads
  // by path (`*.node`). An in-place extension build holds too: its binary is what runs next.
  [
    "loaded-caches",
    anyOf("__pycache__/**", "*.pyc", "*.pyo", "*.so", "*.pyd", "*.node", "*.dylib", "bootsnap/compile-cache-*/**", "bootsnap/load-path-cache", "bootsnap-compile-cache/**", "bootsnap-load-path-cache"),
    "compiled code an interpreter loads instead of, or beside, the reviewed source (Python bytecode, native extension modules, bootsnap caches) runs at the next import or start",
  ],
  // direnv: loads these into the shell on entering the directory.
  // zsh-autoenv sources .autoenv.zsh on entering and .autoenv_leave.zsh on leaving.
  ["envrc", anyOf(".envrc", ".env.rc", ".envrc.local", ".envrc.d/**", ".autoenv.zsh", ".autoenv_leave.zsh"), "direnv and zsh-autoenv run these when anyone enters (or leaves) the directory"],
  // Coding agents: the next session reads these instructions and follows them.
  [
    "agent-instructions",
    anyOf("AGENTS.md", "AGENT.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md", ".cursorrules", ".windsurfrules", ".goosehints", ".github/copilot-instructions.md", ".github/instructions/**", ".github/prompts/**", ".github/chatmodes/**", ".junie/**", ".kiro/**"),
    "instructions the next coding-agent session reads and follows",
  ],
  // Editors: tasks, launch files and project-local settings run programs from the editor.
  [
    "editor-tasks",
    anyOf(
      ".vscode/**", ".idea/**", ".run/**", ".zed/**", ".helix/**", ".fleet/**", ".theia/**", ".vs/**", "*.code-workspace", "*.sublime-project", ".kateproject",
      ".project", ".externalToolBuilders/**", ".nvim.lua", ".nvimrc", ".exrc", ".vimrc", ".gvimrc", ".lvimrc", ".dir-locals.el", ".dir-locals-2.el",
    ),
    "editor settings, tasks and launch files run programs from the editor",
  ],
  // Coding agents and dev containers: hooks, MCP servers and container commands run outside any box.
  [
    "agent-config",
    anyOf(".claude/**", ".mcp.json", ".cursor/**", ".codex/**", ".gemini/**", ".windsurf/**", ".continue/**", ".aider.conf.yml", ".roo/**", ".clinerules/**", ".amazonq/**", ".opencode/**", "opencode.json", ".devcontainer/**", ".devcontainer.json"),
    "coding-agent and dev-container settings: their hooks, MCP servers and commands run outside the sandbox, and they can switch supervision off",
  ],
  // Shells: start-up files run in every new shell started here (or with this directory as HOME).
  ["shell-rc", anyOf(".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".bashrc.d/**", ".profile", ".profile.d/**", ".zshrc", ".zshrc.*", ".zshrc.d/**", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".config/fish/**"), "shell start-up files run in every new shell"],
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
     * lib/effects/stage.ts, together with the agent's unreviewed deletions of the last 30 minutes,
     * lib/effects/deletion-budget.ts) is held for a reviewer; without it, the deletions apply at
     * once, each deleted file backed up and revertible.
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
      "Reads, writes and edits inside the workspace apply at once (backed up, revertible); files that run later, large deletions and secrets ask; commands run in the sandbox and ask to leave it, or when what they touch is known only when they run.",
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
