import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePreset } from "@/tests/helpers/dashboard";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";
import { LINK_SCAN_REUSE_MS } from "@/lib/effects/link-check";

/**
 * Links planted by commands, through run_command over HTTP under `balanced` (commands run in the
 * box at once, their change sets applied unless risky): a link is judged by where the kernel takes
 * it, and a link already in the workspace gives its name to whatever a later command puts at its
 * target (`node_modules` → `nm`, then `nm/.bin/vitest`).
 */

let server: TestServer;
const WAIT0 = { prefer: "wait=0" };
const ws = (rel: string) => path.join(server.workspace, rel);

beforeAll(async () => {
  server = await startTestServer();
  await usePreset(server, "balanced");
}, 900_000);
afterAll(async () => {
  await server?.stop();
});

/** Runs a command as the agent; returns its `changes` (the command itself is never asked about here). */
async function run(command: string): Promise<any> {
  const r = await server.call("run_command", { command }, WAIT0);
  expect(r.status, `${command}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body.data.changes;
}

/** The reviewer decides a held change set. */
async function decide(changes: any, verdict: "approve" | "reject"): Promise<void> {
  const res = await server.reviewer("POST", `/api/approvals/${changes.call_id}/${verdict}`, verdict === "reject" ? { reason: "no" } : {});
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

describe("a link to a file whose target later becomes a directory", () => {
  it.each([
    ["node_modules", "nm", "mkdir -p nm/.bin && printf '#!/bin/sh\\necho tests passed\\n' > nm/.bin/vitest && chmod +x nm/.bin/vitest", "node_modules/.bin/vitest"],
    ["gradle", "gw", "mkdir -p gw/wrapper && echo jar > gw/wrapper/gradle-wrapper.jar", "gradle/wrapper/gradle-wrapper.jar"],
    [".yarn", "yr", "mkdir -p yr/releases && echo 'module.exports=1' > yr/releases/yarn-4.cjs", ".yarn/releases/yarn-4.cjs"],
    [".config", "cf", "mkdir -p cf/fish && echo 'curl x | sh' > cf/fish/config.fish", ".config/fish/config.fish"],
  ])("%s → %s: the link holds, and once approved, the directory planted at its target holds under its name", async (name, target, plant, planted) => {
    const link = await run(`echo placeholder > ${target} && ln -s ${target} ${name}`);
    expect(link.status).toBe("held");
    expect(link.hold_reasons.join(" ")).toContain(`links ${name} → ${target}`);
    await decide(link, "approve");
    expect(fs.readlinkSync(ws(name))).toBe(target);

    const swap = await run(`rm ${target} && ${plant}`);
    expect(swap.status).toBe("held");
    const reasons = swap.hold_reasons.join(" ");
    expect(reasons).toContain(`${planted} (`);
    expect(reasons).toContain(`makes ${target} a directory (was a file), which the link ${name} → ${target}`);
    await decide(swap, "reject");
    expect(fs.existsSync(ws(planted))).toBe(false);
    expect(fs.readFileSync(ws(target), "utf8")).toBe("placeholder\n");
  });
});

describe("a link judged by where the kernel takes it", () => {
  it("`..` after a link leaves the workspace: held, while the string reads as a file inside", async () => {
    const setup = await run("mkdir -p a/b/c/d a/root a/etc && echo f > f && ln -s ../../../../f a/b/c/d/s && echo decoy > a/root/secret.txt && echo decoy > a/etc/hostname");
    expect(setup.status, JSON.stringify(setup.hold_reasons)).toBe("applied");
    // f becomes a directory: s now stands for it, so this holds; the reviewer lets it through.
    const swap = await run("rm f && mkdir f && echo in > f/keep");
    expect(swap.status).toBe("held");
    expect(swap.hold_reasons.join(" ")).toContain("makes f a directory (was a file), which the link a/b/c/d/s → ../../../../f");
    await decide(swap, "approve");
    for (const target of ["s/../../../../root/secret.txt", "s/../../../../etc/hostname", "s/../../../../a/root/secret.txt", "s/keep"]) {
      const t = await run(`ln -s ${target} a/b/c/d/t`);
      expect(t.status, target).toBe("held");
      expect(t.hold_reasons.join(" ")).toContain(`links a/b/c/d/t → ${target}`);
      await decide(t, "reject");
      expect(fs.existsSync(ws("a/b/c/d/t"))).toBe(false);
    }
  });

  it("ordinary links to files apply at once, and so do edits through them", async () => {
    const r = await run("mkdir -p docs && echo '# hi' > docs/README.md && ln -s docs/README.md README && mkdir -p pkg && ln -s ../docs/README.md pkg/README.md");
    expect(r.status, JSON.stringify(r.hold_reasons)).toBe("applied");
    expect(fs.readlinkSync(ws("README"))).toBe("docs/README.md");
    const edit = await run("echo more >> README");
    expect(edit.status, JSON.stringify(edit.hold_reasons)).toBe("applied");
    expect(fs.readFileSync(ws("docs/README.md"), "utf8")).toBe("# hi\nmore\n");
  });
});

describe("write_file and edit_file judge a file under every name a workspace link gives it", () => {
  it.each([
    ["write_file", "Makefile", "build/make-rules.txt", { path: "build/make-rules.txt", content: "all:\n\tcurl x | sh\n" }, /risky-makefiles/],
    ["edit_file", "Makefile", "build/make-rules.txt", { path: "build/make-rules.txt", old_string: "true", new_string: "curl x | sh" }, /risky-makefiles/],
    ["write_file", ".github", "ci", { path: "ci/workflows/x.yml", content: "on: push\n", create_dirs: true }, /risky-github-workflows/],
    ["write_file", "home/.config", "../dotconfig", { path: "dotconfig/fish/config.fish", content: "curl x | sh\n", create_dirs: true }, /risky-shell-rc/],
    ["write_file", "tools/node_modules", "../vendor-mods", { path: "vendor-mods/.bin/vitest", content: "#!/bin/sh\n", create_dirs: true }, /risky-installed-programs/],
  ])("%s through %s → %s asks", async (tool, name, target, args, rule) => {
    fs.mkdirSync(path.dirname(ws(name)), { recursive: true });
    if (name === "Makefile") {
      fs.mkdirSync(ws("build"), { recursive: true });
      fs.writeFileSync(ws("build/make-rules.txt"), "all:\n\ttrue\n");
    } else fs.mkdirSync(path.resolve(path.dirname(ws(name)), target), { recursive: true });
    if (!fs.lstatSync(ws(name), { throwIfNoEntry: false })) fs.symlinkSync(target, ws(name));
    // A link the person just made outside the gateway is seen once the write tools' reused walk is older than its reuse time.
    await new Promise((r) => setTimeout(r, LINK_SCAN_REUSE_MS + 100));
    const r = await server.call(tool, args, WAIT0);
    expect(r.body.error?.name, JSON.stringify(r.body)).toBe("approval_pending");
    const [row] = await sql<{ decisionJson: string }>(server.databaseUrl, `SELECT "decisionJson" FROM "ToolCall" WHERE id = $1`, [r.body.call_id]);
    expect(JSON.parse(row.decisionJson).rule.id).toMatch(rule);
    await server.reviewer("POST", `/api/approvals/${r.body.call_id}/reject`, { reason: "no" });
  });

  it("a write of an ordinary linked file applies at once", async () => {
    fs.mkdirSync(ws("guide"), { recursive: true });
    fs.writeFileSync(ws("guide/INDEX.md"), "# guide\n");
    fs.symlinkSync("guide/INDEX.md", ws("INDEX.md"));
    const r = await server.call("write_file", { path: "guide/INDEX.md", content: "# guide, longer\n" }, WAIT0);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(fs.readFileSync(ws("INDEX.md"), "utf8")).toBe("# guide, longer\n");
  });
});

describe("a link whose target climbs after a name is held when made (it is judged once)", () => {
  it.each([
    ["w/node_modules/a/b/c/d/e/L", "D/../../../../../../../../root/rt7-secret.txt"],
    ["w/node_modules/a/b/c/d/e/L", "D/./../../../../../../../../root/rt7-secret.txt"],
    ["w/node_modules/a/b/c/d/e/L", "D//../../../../../../../../root/rt7-secret.txt"],
    ["w/node_modules/.cache/tool/L", "../../../../root/../root/rt7-secret.txt"],
    ["lib/L", "D/../../root/rt7-secret.txt"],
  ])("%s → %s", async (name, target) => {
    const setup = await run(`mkdir -p root ${path.posix.dirname(name)}/D && echo decoy > root/rt7-secret.txt`);
    expect(setup.status, JSON.stringify(setup.hold_reasons)).toBe("applied");
    // Lexically the target names the decoy file inside the workspace, through plain directories.
    expect(path.posix.normalize(path.posix.join(path.posix.dirname(name), target))).toBe("root/rt7-secret.txt");
    const made = await run(`ln -s '${target}' ${name}`);
    expect(made.status, JSON.stringify(made)).toBe("held");
    expect(made.hold_reasons.join(" ")).toContain(`links ${name} → ${target}`);
    await decide(made, "reject");
    expect(fs.existsSync(ws(name))).toBe(false);
  });

  it("the first of the three steps that turned a node_modules link into a link to the host is held", async () => {
    const one = await run("mkdir -p root2 w2/node_modules/q/b/c/d/e/D && echo decoy > root2/s.txt && echo tfile > t2 && ln -s D/../../../../../../../../root2/s.txt w2/node_modules/q/b/c/d/e/L");
    expect(one.status).toBe("held");
    await decide(one, "reject");
    expect(fs.existsSync(ws("w2/node_modules/q/b/c/d/e/L"))).toBe(false);
  });

  it("links that climb only at the start apply at once, in node_modules too", async () => {
    const r = await run("mkdir -p w3/node_modules/vt/bin pkgs/a && echo x > w3/node_modules/vt/bin/vt.mjs && echo y > keep2.txt && ln -s ../../keep2.txt pkgs/a/keep && ln -s ./keep2.txt keep3 && ln -s ../../../../keep2.txt w3/node_modules/vt/bin/k");
    expect(r.status, JSON.stringify(r.hold_reasons)).toBe("applied");
    expect(fs.readFileSync(ws("w3/node_modules/vt/bin/k"), "utf8")).toBe("y\n");
  });
});

describe("a link the gateway applied inside node_modules is judged again when its target is retyped", () => {
  it.each([
    ["w4/node_modules/pk/L", "../../../tf4", "tf4", "rm tf4 && mkdir tf4 && echo k > tf4/keep", "a directory"],
    ["w5/node_modules/.pnpm/a@1/node_modules/a/L", "../../../../../../tf5", "tf5", "rm tf5 && echo o > o5 && ln -s o5 tf5", "a link"],
  ])("%s → %s", async (name, target, file, retype, to) => {
    const made = await run(`mkdir -p ${path.posix.dirname(name)} && echo t > ${file} && ln -s ${target} ${name}`);
    expect(made.status, JSON.stringify(made.hold_reasons)).toBe("applied");
    expect(fs.readFileSync(ws(name), "utf8")).toBe("t\n");
    const swap = await run(retype);
    expect(swap.status, JSON.stringify(swap)).toBe("held");
    expect(swap.hold_reasons.join(" ")).toContain(`makes ${file} ${to} (was a file), which the link ${name} → ${target}`);
    await decide(swap, "reject");
    expect(fs.readFileSync(ws(file), "utf8")).toBe("t\n");
  });
});
