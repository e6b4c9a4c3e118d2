import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide } from "@/lib/policy/decide";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { defaultRulesForPreset, PRESET_NAMES, type PresetName } from "@/lib/policy/presets";
import { secretPathMatcher } from "@/lib/policy/rule-match";
import { stageEntries } from "@/lib/effects/stage";
import type { ChangeEntry } from "@/lib/effects/read-change-set";
import type { BackupStore } from "@/lib/tools/define-tool";

/**
 * The credential files of the sensitive list, by family, in every spelling: read_file asks under
 * every preset by a sensitive-path rule, the box's secret matcher masks them, and a command's
 * change set that creates one is held. Files that only look alike (a source named after a key
 * type, a public key, a workflow with "secret" in its name) and files a tool needs to run
 * (`.yarnrc.yml`, `.bundle/config`, `google-services.json`) stay ordinary readable files.
 */

const CREDENTIALS: Record<string, string[]> = {
  "package managers and forge CLIs": [
    "auth.json", // Composer
    ".composer/auth.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".config/glab-cli/config.yml",
    ".pub-cache/credentials.json",
    "pub-credentials.json",
    ".config/pypoetry/auth.toml",
    ".terraform.d/credentials.tfrc.json",
    ".dockercfg",
    ".sentryclirc",
  ],
  kubeconfig: ["kubeconfig", "kubeconfig.yaml", "kubeconfig.yml", "kubeconfig.json", "prod.kubeconfig", "cluster.kubeconfig.yaml", "admin-kubeconfig", "dev_kubeconfig.yml", "kubeconfig-staging.yaml", "kubeconfig_prod.yml"],
  "private keys under other names": ["deploy/deploy_rsa", "deploy_dsa", "backup_ecdsa", "ci_ed25519", "ci_ed25519_sk", "ci_ecdsa_sk", "etc/ssh/ssh_host_ed25519_key", "ssh_host_rsa_key", "ssh_host_ecdsa_key", "DEPLOY_RSA"],
  "files named as secrets": [
    "secrets.yml",
    "secrets.yaml",
    "secrets.json",
    "secrets.toml",
    "secret.yaml",
    "config/secrets.yml",
    "secrets.dev.yaml",
    "app-secrets.json",
    "db_secret.toml",
    "k8s/prod.secrets.yaml",
    ".streamlit/secrets.toml",
    ".secrets",
    ".secrets.toml",
    ".secrets.yaml",
    "Secrets.JSON",
    "serviceAccountKey.json",
    "serviceAccountKey-prod.json",
    "service_account.json",
    "service_account_key.json",
  ],
};

/** Not credentials, or needed by a tool to run: readable, unmasked, not held for their name. */
const ORDINARY = [
  "pkg/kubeconfig.go",
  "pkg/kubeconfig_test.go",
  "docs/kubeconfig.md",
  "deploy_rsa.pub",
  "etc/ssh/ssh_host_ed25519_key.pub",
  "src/parse_rsa.go",
  "crypto_ed25519.rs",
  "src/secretsmanager.ts",
  "docs/secrets.md",
  ".github/secret-scan.yml",
  ".secrets.baseline",
  "src/auth.ts",
  "auth.json.example",
  "google-services.json",
  "GoogleService-Info.plist",
  ".flaskenv",
  "src/fixtures/users.json",
];

/** Runs-later files that may hold a token but are needed to run the tool: asked for on change, readable. */
const NEEDED_TO_RUN = [".yarnrc.yml", ".bundle/config"];

const cases = Object.entries(CREDENTIALS).flatMap(([family, names]) => names.flatMap((name) => [[family, name] as const, [family, `apps/web/${name}`] as const]));
const isSecret = secretPathMatcher(DEFAULT_RULES);

let root: string;
beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "credential-families-")));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const decideRead = (p: string, preset: PresetName) => decide({ tool: "read_file", risk: "read", paths: [p], workspaceRoot: root, preset }, defaultRulesForPreset(preset));

/** A command's change set that creates `rel` in an empty workspace. */
function stageCreated(rel: string) {
  const parts = rel.split("/");
  const entries: ChangeEntry[] = parts.slice(1).map((_, i) => ({ path: parts.slice(0, i + 1).join("/"), kind: "dir_created", before: null, after: { type: "dir", mode: 0o755, size: 0 } }));
  entries.push({ path: rel, kind: "created", before: null, after: { type: "file", mode: 0o600, size: 8 } });
  const noBackups: BackupStore = {
    save: () => Promise.reject(new Error("a created file has nothing to back up")),
    get: () => Promise.resolve(null),
    list: () => Promise.resolve({ items: [], total: 0 }),
    discard: () => Promise.resolve(),
  };
  return stageEntries({ root, entries, source: { bytes: () => Promise.resolve(Buffer.from("token=x\n")) }, backups: noBackups });
}

describe("credential files of every family are sensitive", () => {
  it.each(PRESET_NAMES)("%s: read_file of each asks, by a sensitive-path rule", async (preset) => {
    const missed: string[] = [];
    for (const [, name] of cases) {
      const v = await decideRead(name, preset);
      if (v.decision !== "ask" || !v.rule?.id.startsWith("default:sensitive-")) missed.push(`${name}: ${v.decision} ${v.rule?.id}`);
    }
    expect(missed).toEqual([]);
  });

  it("the box masks each (the one secret matcher)", () => {
    expect(cases.filter(([, name]) => !isSecret(name)).map(([, name]) => name)).toEqual([]);
  });

  it("a command's change set creating each is held, naming the file", async () => {
    const missed: string[] = [];
    for (const [, name] of cases) {
      const staged = await stageCreated(name);
      if (!staged.holdReasons.some((r) => r.includes(name))) missed.push(name);
    }
    expect(missed).toEqual([]);
  });
});

describe("look-alikes and files a tool needs stay readable", () => {
  it.each(ORDINARY)("%s: read_file is allowed under balanced, the box shows it, a command creating it applies", async (name) => {
    for (const p of [name, `apps/web/${name}`]) {
      const v = await decideRead(p, "balanced");
      expect(v.decision, `${p}: ${v.rule?.id}`).toBe("allow");
      expect(isSecret(p), p).toBe(false);
      expect((await stageCreated(p)).holdReasons).toEqual([]);
    }
  });

  it.each(NEEDED_TO_RUN)("%s: readable and unmasked, but writing it asks (runs later)", async (name) => {
    expect((await decideRead(name, "balanced")).decision).toBe("allow");
    expect(isSecret(name)).toBe(false);
    const w = await decide({ tool: "write_file", risk: "write", paths: [name], workspaceRoot: root, preset: "balanced" }, defaultRulesForPreset("balanced"));
    expect(w.decision).toBe("ask");
    expect(w.rule?.id).toMatch(/^preset:balanced:risky-/);
  });
});
