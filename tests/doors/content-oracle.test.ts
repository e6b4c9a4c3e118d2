import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePreset } from "@/tests/helpers/dashboard";
import { startTestServer, type TestServer } from "@/tests/helpers/server";

/**
 * A file the agent may not read unasked (a secret, a hard-linked file) is not judged by its
 * content before a reviewer decides: edit_file whose old_string matches, does not match or
 * matches twice, and write_file with a right or wrong expected_sha256, all answer the same 601
 * with the same reasons. Red team round 7 (H12) grew a match one character at a time from the
 * three different answers and read .env and id_rsa without any approval. Over HTTP, balanced.
 */

let server: TestServer;
const WAIT0 = { prefer: "wait=0" };
const SECRET = "API_KEY=sk-oracle-0123456789\nDB=postgres://u:p@h/db\n";

beforeAll(async () => {
  server = await startTestServer();
  await usePreset(server, "balanced");
  for (const rel of [".env", "config/.ENV.prod", "keys/id_rsa", "deploy_rsa", "shared.txt"]) {
    fs.mkdirSync(path.dirname(path.join(server.workspace, rel)), { recursive: true });
    fs.writeFileSync(path.join(server.workspace, rel), SECRET);
  }
  fs.linkSync(path.join(server.workspace, "shared.txt"), path.join(server.workspace, "shared-other-name.txt"));
  fs.writeFileSync(path.join(server.workspace, "notes.txt"), "plain\n");
}, 900_000);
afterAll(async () => {
  await server?.stop();
});

/** The answer the agent gets, without its call id. */
async function answer(tool: string, args: Record<string, unknown>): Promise<unknown> {
  const r = await server.call(tool, args, WAIT0);
  if (r.body.call_id) await server.reviewer("POST", `/api/approvals/${r.body.call_id}/reject`, { reason: "oracle test" }).catch(() => undefined);
  const { call_id: _id, status_url: _url, ...detail } = r.body.error?.detail ?? {};
  return { status: r.status, name: r.body.error?.name ?? "ok", detail };
}

describe("edits and writes of a file the agent may not read unasked", () => {
  it.each([".env", "config/.ENV.prod", "keys/id_rsa", "deploy_rsa", "shared.txt"])("%s: every guess gets the same answer", async (rel) => {
    const answers = [
      await answer("edit_file", { path: rel, old_string: "API_KEY=sk-oracle", new_string: "X" }), // matches once
      await answer("edit_file", { path: rel, old_string: "API_KEY=sk-wrong", new_string: "X" }), // no match
      await answer("edit_file", { path: rel, old_string: "=", new_string: "X" }), // matches twice
      await answer("write_file", { path: rel, content: "x\n", expected_sha256: crypto.createHash("sha256").update(SECRET).digest("hex") }),
      await answer("write_file", { path: rel, content: "x\n", expected_sha256: "0".repeat(64) }),
    ];
    expect((answers[0] as { name: string }).name).toBe("approval_pending");
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect(fs.readFileSync(path.join(server.workspace, rel), "utf8")).toBe(SECRET);
  });

  it("an ordinary file still answers at once why an edit cannot apply", async () => {
    const r = await server.call("edit_file", { path: "notes.txt", old_string: "absent", new_string: "X" }, WAIT0);
    expect(r.body.error?.name).toBe("edit_no_match");
  });
});
