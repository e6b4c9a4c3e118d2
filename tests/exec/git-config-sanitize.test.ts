import { describe, expect, it } from "vitest";
import { parseConfigBytes, sanitizeGlobalConfig, sanitizeRepositoryConfig, stripUrlCredentials } from "@/lib/exec/git-config-sanitize";

/**
 * The sanitized copies of git configuration the sandbox shows: credentials gone in every spelling
 * git accepts, everything else read back by git exactly as before.
 */

const TOKEN = "tok3nSECRET";
const read = async (text: string) => (await parseConfigBytes(Buffer.from(text, "latin1"))) ?? [];

describe("URL credentials", () => {
  it.each([
    [`https://user:${TOKEN}@github.com/o/r.git`, "https://github.com/o/r.git"],
    [`https://${TOKEN}@github.com/o/r.git`, "https://github.com/o/r.git"],
    [`https://x-access-token:${TOKEN}@github.com/o/r`, "https://github.com/o/r"],
    [`HTTP://u:${TOKEN}@h/x`, "HTTP://h/x"],
    [`https://u:p@${TOKEN}@h/x`, "https://h/x"],
    [`ssh://git:${TOKEN}@host/r`, "ssh://git@host/r"],
    ["ssh://git@host/r", "ssh://git@host/r"],
    ["git@github.com:o/r.git", "git@github.com:o/r.git"],
    [`https://h/r?access_token=${TOKEN}`, "https://h/r"],
    [`https://h/r?ref=main&private_token=${TOKEN}`, "https://h/r?ref=main"],
    [`ftp://a:${TOKEN}@h/ and https://b:${TOKEN}@i/`, "ftp://h/ and https://i/"],
  ])("%s → %s", (input, out) => {
    expect(stripUrlCredentials(input)).toBe(out);
  });
});

describe("a repository's config", () => {
  const CONFIG = [
    "[core]",
    "\trepositoryformatversion = 0",
    "\tfilemode = true",
    "\tbare = false",
    '[remote "origin"]',
    `\turl = https://user:${TOKEN}@github.com/o/r.git`,
    "\tfetch = +refs/heads/*:refs/remotes/origin/*",
    `\tpushurl = "https://${TOKEN}@github.com/o/r.git" ; a comment`,
    '[branch "main"]',
    "\tremote = origin",
    "\tmerge = refs/heads/main",
    "[http]",
    `\textraheader = AUTHORIZATION: bearer ${TOKEN}`,
    `[http "https://github.com/"]`,
    `\textraHeader = Authorization: Basic ${Buffer.from(`u:${TOKEN}`).toString("base64")}`,
    "\tsslVerify = true",
    "[credential]",
    `\thelper = "!f() { echo password=${TOKEN}; }; f"`,
    `[credential "https://github.com"]`,
    `\tusername = ${TOKEN}`,
    `[url "https://u:${TOKEN}@github.com/"]`,
    "\tinsteadOf = https://github.com/",
    "[gitlab]",
    `\ttoken = ${TOKEN}`,
    "[hub]",
    `\toauthtoken = ${TOKEN}`,
    "[lfs]",
    `\turl = "https://u:${TOKEN}@lfs.example.com/\\"quoted\\"\\\\path"`,
    "[custom]",
    `\tnote = "line one\\nline \\ttwo"`,
    "\tflag",
    `[weird "sub \\"with\\" quotes"]`,
    "\tkey = value",
    "[include]",
    "\tpath = ../creds.inc",
    "[alias]",
    "\tst = status -sb",
  ].join("\n");

  it("keeps every ordinary entry and removes each credential spelling", async () => {
    const r = await sanitizeRepositoryConfig(Buffer.from(CONFIG));
    expect(r).not.toBeNull();
    expect(r!.text).not.toMatch(/tok3n|dTp0b2szbl|bearer|Basic /i);
    const entries = await read(r!.text);
    const get = (k: string) => entries.filter((e) => e.key === k).map((e) => e.value);
    expect(get("core.repositoryformatversion")).toEqual(["0"]);
    expect(get("remote.origin.url")).toEqual(["https://github.com/o/r.git"]);
    expect(get("remote.origin.pushurl")).toEqual(["https://github.com/o/r.git"]);
    expect(get("remote.origin.fetch")).toEqual(["+refs/heads/*:refs/remotes/origin/*"]);
    expect(get("branch.main.merge")).toEqual(["refs/heads/main"]);
    expect(get("http.https://github.com/.sslverify")).toEqual(["true"]);
    expect(get("url.https://github.com/.insteadof")).toEqual(["https://github.com/"]);
    expect(get("lfs.url")).toEqual(['https://lfs.example.com/"quoted"\\path']);
    expect(get("custom.note")).toEqual(["line one\nline \ttwo"]);
    expect(get("custom.flag")).toEqual([null]);
    expect(get('weird.sub "with" quotes.key')).toEqual(["value"]);
    expect(get("include.path")).toEqual(["../creds.inc"]);
    expect(get("alias.st")).toEqual(["status -sb"]);
    for (const k of ["http.extraheader", "http.https://github.com/.extraheader", "credential.helper", "credential.https://github.com.username", "gitlab.token", "hub.oauthtoken"]) expect(get(k), k).toEqual([]);
    expect(r!.changed).toEqual(expect.arrayContaining(["remote.origin.url", "http.extraheader", "credential.helper", "gitlab.token"]));
  });

  it("a config git cannot read is not sanitized (null: the caller masks it)", async () => {
    expect(await sanitizeRepositoryConfig(Buffer.from(`[remote "origin"\n\turl = https://u:${TOKEN}@h/x\n`))).toBeNull();
    expect(await sanitizeRepositoryConfig(Buffer.from(`[core]\n\tx = "unterminated\n`))).toBeNull();
    expect(await sanitizeRepositoryConfig(Buffer.alloc(2 * 1024 * 1024, 0x20))).toBeNull();
  });

  it("bytes that are not UTF-8 survive unchanged", async () => {
    const r = await sanitizeRepositoryConfig(Buffer.from([...Buffer.from('[remote "o"]\n\turl = /srv/r'), 0xe9, ...Buffer.from("po\n")]));
    expect(Buffer.from(r!.text, "latin1").includes(Buffer.from([0x72, 0xe9, 0x70]))).toBe(true);
  });
});

describe("the box HOME's global config keeps inert keys only", () => {
  it("identity and preferences stay; everything that can run a program or read elsewhere goes", async () => {
    const text = [
      "[user]\n\tname = Agent\n\temail = agent@example.com",
      "[init]\n\tdefaultBranch = main",
      "[pull]\n\trebase = true",
      "[core]\n\tfsmonitor = touch PWNED\n\thooksPath = /tmp/hooks\n\tpager = sh -c 'touch PWNED'\n\tsshCommand = touch PWNED\n\tattributesFile = ~/.attrs\n\tautocrlf = input",
      '[alias]\n\tst = "!touch PWNED"',
      "[include]\n\tpath = ~/.more",
      '[includeIf "gitdir:/"]\n\tpath = ~/.more',
      '[filter "x"]\n\tclean = touch PWNED',
      '[diff "x"]\n\ttextconv = touch PWNED',
      "[diff]\n\texternal = touch PWNED",
      "[credential]\n\thelper = store",
    ].join("\n");
    const r = await sanitizeGlobalConfig(Buffer.from(text));
    const entries = await read(r!.text);
    expect(entries).toEqual([
      { key: "user.name", value: "Agent" },
      { key: "user.email", value: "agent@example.com" },
      { key: "init.defaultbranch", value: "main" },
      { key: "pull.rebase", value: "true" },
      { key: "core.autocrlf", value: "input" },
    ]);
  });
});
