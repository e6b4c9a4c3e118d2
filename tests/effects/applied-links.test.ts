import fs from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { db } from "@/lib/db";
import { appliedLinks } from "@/lib/effects/applied-links";
import { scanLinks } from "@/lib/effects/link-check";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";
import { treeHash } from "@/tests/effects/tree-hash";

/**
 * Links the gateway applied inside node_modules, where the walk for links does not look, are
 * judged again when a later command changes the type of a path they resolve through: real bwrap,
 * a real overlay, real SQLite rows of the applied change sets (lib/effects/applied-links.ts).
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
});
beforeEach(() => emptyWorkspace(ws));

const boxed = (command: string) => runBoxed(ws, command, { sandbox: true });

describe("a link applied inside node_modules, then its target retyped", () => {
  it.each([
    ["node_modules/pk/lib/L", "../../../tf", "tf", "rm tf && mkdir tf && echo k > tf/keep", "directory"],
    ["node_modules/.pnpm/a@1/node_modules/a/L", "../../../../../tf", "tf", "rm tf && mkdir -p tf/x && echo k > tf/x/keep", "directory"],
    ["node_modules/.cache/tool/L", "../../../src/tf", "src/tf", "rm src/tf && echo o > other && ln -s ../other src/tf", "link"],
    ["sub/node_modules/b/c/L", "../../../../tf", "tf", "rm tf && mkdir tf", "directory"],
  ])("%s → %s: retyping %s is held", async (name, target, file, retype, to) => {
    const made = await boxed(`mkdir -p ${path.posix.dirname(name)} ${path.posix.dirname(file)} && echo t > ${file} && ln -s ${target} ${name}`);
    expect(made.changes?.status, JSON.stringify(made.changes?.hold_reasons)).toBe("applied");
    expect(fs.readlinkSync(path.join(ws.root, name))).toBe(target);
    // The walk alone does not see it; the applied rows do.
    expect((await scanLinks(ws.root)).links.map((l) => l.path)).not.toContain(name);
    expect((await appliedLinks(ws.id, ws.root)).map((l) => l.path)).toContain(name);

    const before = treeHash(ws.root);
    await expect(runBoxed(ws, retype, { sandbox: true })).rejects.toThrow(/left "running"/);
    expect(treeHash(ws.root)).toBe(before);
    const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
    expect(JSON.parse(set!.summaryJson).hold_reasons.join(" | ")).toContain(`makes ${file} a ${to} (was a file), which the link ${name} → ${target}`);
  });

  it("a link no longer on disk is left out, and ordinary work beside a kept link applies", async () => {
    const made = await boxed("mkdir -p node_modules/q && echo t > tq && ln -s ../../tq node_modules/q/L && ln -s ../../tq node_modules/q/gone");
    expect(made.changes?.status, JSON.stringify(made.changes?.hold_reasons)).toBe("applied");
    fs.rmSync(path.join(ws.root, "node_modules/q/gone"));
    const links = await appliedLinks(ws.id, ws.root);
    expect(links).toContainEqual({ path: "node_modules/q/L", target: "../../tq" });
    expect(links.map((l) => l.path)).not.toContain("node_modules/q/gone");
    const edit = await boxed("echo more >> tq && mkdir -p src && echo x > src/a.ts");
    expect(edit.changes?.status, JSON.stringify(edit.changes?.hold_reasons)).toBe("applied");
    expect(fs.readFileSync(path.join(ws.root, "tq"), "utf8")).toBe("t\nmore\n");
  });
});
