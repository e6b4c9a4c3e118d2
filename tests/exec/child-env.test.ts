import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildChildEnv, CHILD_ENV_ALLOW_LIST, CHILD_ENV_FIXED, childHome } from "@/lib/exec/child-env";

/** The explicit, allow-listed environment of run_command children (C21-9). */

const WS = "/srv/work/proj";
const HOMES = "/var/lib/agent-reach/homes";
const base = {
  PATH: "/usr/local/bin:/usr/bin:.::relative/bin:/srv/work/proj/node_modules/.bin:/bin:/usr/bin",
  LANG: "en_US.UTF-8",
  LC_ALL: "C",
  TZ: "UTC",
  USER: "dev",
  HOME: "/home/dev",
  DATABASE_URL: "postgres://u:p@db/x",
  GATEWAY_DB_URL: "postgres://gw:s3cret@db/x",
  ANTHROPIC_API_KEY: "sk-ant",
  OPENAI_API_KEY: "sk",
  AGENT_REACH_WORKSPACE: "/srv/work/proj",
  GITHUB_TOKEN: "ghp",
  NPM_TOKEN: "npm",
  AWS_SECRET_ACCESS_KEY: "aws",
  SSH_AUTH_SOCK: "/tmp/ssh.sock",
  LD_PRELOAD: "/x.so",
  BASH_ENV: "/x.sh",
  NODE_OPTIONS: "--require /x.js",
  PS4: "$(touch pwned)",
};

describe("buildChildEnv", () => {
  const env = buildChildEnv(WS, { homeRoot: HOMES, base });

  it("keeps only allow-listed and fixed variables, HOME and PATH", () => {
    expect(Object.keys(env).sort()).toEqual(["GIT_CEILING_DIRECTORIES", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "GIT_PAGER", "GIT_TERMINAL_PROMPT", "HOME", "LANG", "LC_ALL", "NO_COLOR", "PAGER", "PATH", "SHELL", "TERM", "TZ", "USER"].sort());
    expect(env).toMatchObject({ LANG: "en_US.UTF-8", LC_ALL: "C", TZ: "UTC", USER: "dev", ...CHILD_ENV_FIXED });
  });

  it("stops git's repository search at the workspace root and refuses bare repositories it only found by searching", () => {
    expect(env.GIT_CEILING_DIRECTORIES).toBe(path.dirname(WS));
    expect([env.GIT_CONFIG_COUNT, env.GIT_CONFIG_KEY_0, env.GIT_CONFIG_VALUE_0]).toEqual(["1", "safe.bareRepository", "explicit"]);
  });

  it.each(["DATABASE_URL", "GATEWAY_DB_URL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AGENT_REACH_WORKSPACE", "GITHUB_TOKEN", "NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "LD_PRELOAD", "BASH_ENV", "NODE_OPTIONS", "PS4"])("drops %s", (name) => {
    expect(env[name]).toBeUndefined();
  });

  it("gives every workspace its own HOME outside the workspace, not the real home", () => {
    expect(env.HOME).toBe(childHome(WS, HOMES));
    expect(path.dirname(env.HOME)).toBe(HOMES);
    expect(env.HOME).not.toBe("/home/dev");
    expect(childHome("/srv/work/other", HOMES)).not.toBe(env.HOME);
    expect(buildChildEnv(WS, { homeRoot: HOMES, base }).HOME).toBe(env.HOME);
  });

  it("removes empty, relative, duplicate and in-workspace PATH entries", () => {
    expect(env.PATH).toBe("/usr/local/bin:/usr/bin:/bin");
  });

  it("defaults to a UTF-8 locale and a standard PATH", () => {
    const bare = buildChildEnv(WS, { homeRoot: HOMES, base: {} });
    expect(bare.LANG).toBe("C.UTF-8");
    expect(bare.PATH).toContain("/usr/bin");
  });

  it("documents its allow-list", () => {
    expect(CHILD_ENV_ALLOW_LIST).toContain("PATH");
    expect(CHILD_ENV_ALLOW_LIST.some((n) => /KEY|TOKEN|SECRET|DATABASE|AGENT_REACH/.test(n))).toBe(false);
  });
});
