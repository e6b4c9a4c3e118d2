import { describe, expect, it } from "vitest";
import { parseConfigBytes, sanitizeGlobalConfig, sanitizeLegacyRemote, sanitizeRepositoryConfig, stripUrlCredentials } from "@/lib/exec/git-config-sanitize";

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
    // Userinfo with a password and no scheme (a proxy as git accepts it).
    [`proxyuser:${TOKEN}@proxy.corp:3128`, "proxy.corp:3128"],
    [`u:${TOKEN}@h`, "h"],
    [`:${TOKEN}@proxy:8080`, "proxy:8080"],
    [`a:b:${TOKEN}@h:1`, "h:1"],
    [`--proxy=u:${TOKEN}@h:1`, "--proxy=h:1"],
    [`"u:${TOKEN}@h"`, '"h"'],
    // …but a login name or an email address alone is not a secret.
    ["first.last@example.com", "first.last@example.com"],
    ["Name <first.last@example.com>", "Name <first.last@example.com>"],
    ["mailto:first.last@example.com", "mailto:first.last@example.com"],
    ["git@github.com:o/r.git", "git@github.com:o/r.git"],
    ["https://h:8443/path@v2", "https://h:8443/path@v2"],
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
    "\tkept = value",
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
    expect(get('weird.sub "with" quotes.kept')).toEqual(["value"]);
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

describe("credentials under other names and in values", () => {
  const GHP = "ghp_ValueOnlyTok3nXYZ1234567890abcdefAB";
  const CONFIG = [
    "[user]",
    "\tname = Person",
    "\temail = person@example.com",
    "\tsigningkey = 0xDEADBEEF12345678",
    "[http]",
    `\tproxy = proxyuser:Pr0xyPassw0rd77@proxy.corp:3128`,
    `[http "https://intranet/"]`,
    `\tproxy = "u:${TOKEN}@p2:8080"`,
    "[sendemail]",
    `\tsmtpPass = SmtpPassw0rd-zz99`,
    "\tsmtpUser = person",
    "\tsmtpServer = smtp.example.com",
    "[imap]",
    `\tpass = ImapPa55word-q1`,
    "\thost = imaps://imap.example.com",
    "[deploy]",
    `\tkey = ${GHP}`,
    "[ci]",
    `\tvalue = ${GHP}`,
    `\tdbpwd = ${TOKEN}`,
    `\tnote = "glpat-abcdefghij0123456789"`,
    `\tjwt = eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U`,
    "[myapp]",
    `\tcredentialStore = plain:${TOKEN}`,
    `\tapiKeys = ${TOKEN}`,
    "\tmode = fast",
    '[branch "Release2024CandidateBranchX"]',
    "\tmerge = refs/heads/Release2024CandidateBranchX",
    `[remote "upstream"]`,
    `\turl = https://person:${GHP}@github.com/o/r.git`,
  ].join("\n");

  it("drops pass/pwd/key/credential names and credential-shaped values; keeps identity and signingKey", async () => {
    const r = await sanitizeRepositoryConfig(Buffer.from(CONFIG));
    expect(r).not.toBeNull();
    expect(r!.text).not.toMatch(/Pr0xyPassw0rd|SmtpPassw0rd|ImapPa55word|ghp_|tok3n|glpat-|eyJhbGci/i);
    const entries = await read(r!.text);
    const get = (k: string) => entries.filter((e) => e.key === k).map((e) => e.value);
    expect(get("user.name")).toEqual(["Person"]);
    expect(get("user.email")).toEqual(["person@example.com"]);
    expect(get("user.signingkey")).toEqual(["0xDEADBEEF12345678"]);
    expect(get("http.proxy")).toEqual(["proxy.corp:3128"]);
    expect(get("http.https://intranet/.proxy")).toEqual(["p2:8080"]);
    expect(get("sendemail.smtpuser")).toEqual(["person"]);
    expect(get("sendemail.smtpserver")).toEqual(["smtp.example.com"]);
    expect(get("imap.host")).toEqual(["imaps://imap.example.com"]);
    expect(get("myapp.mode")).toEqual(["fast"]);
    expect(get("branch.Release2024CandidateBranchX.merge")).toEqual(["refs/heads/Release2024CandidateBranchX"]);
    expect(get("remote.upstream.url")).toEqual(["https://github.com/o/r.git"]);
    for (const k of ["sendemail.smtppass", "imap.pass", "deploy.key", "ci.value", "ci.dbpwd", "ci.note", "ci.jwt", "myapp.credentialstore", "myapp.apikeys"]) expect(get(k), k).toEqual([]);
    expect(r!.changed).toEqual(expect.arrayContaining(["http.proxy", "sendemail.smtppass", "imap.pass", "deploy.key", "ci.value"]));
  });

  it("legacy remote files lose URL credentials and credential-shaped lines", () => {
    const remotes = `URL: https://person:ghp_LegacyRemotesTok3n@github.com/o/r.git\nURL: u:${TOKEN}@mirror:/r.git\nPull: refs/heads/main:refs/heads/origin\nPush: ${GHP}\n`;
    const r = sanitizeLegacyRemote(Buffer.from(remotes));
    expect(r).toEqual({ text: "URL: https://github.com/o/r.git\nURL: mirror:/r.git\nPull: refs/heads/main:refs/heads/origin\n", changed: true });
    expect(sanitizeLegacyRemote(Buffer.from(`https://x-access-token:${TOKEN}@github.com/o/r.git#main\n`))).toEqual({ text: "https://github.com/o/r.git#main\n", changed: true });
    expect(sanitizeLegacyRemote(Buffer.from("URL: git@github.com:o/r.git\n"))).toEqual({ text: "URL: git@github.com:o/r.git\n", changed: false });
    expect(sanitizeLegacyRemote(Buffer.alloc(70 * 1024, 65))).toBeNull();
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
