import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkStoreOutsideWorkspace } from "@/lib/runtime/bootstrap";

/** The data directory and the SQLite file must not be inside the workspace the agent changes. */
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-store-")));
const ws = path.join(base, "project");
fs.mkdirSync(path.join(ws, "sub"), { recursive: true });
fs.symlinkSync(path.join(ws, "sub"), path.join(base, "link-into-ws"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

const config = (dataDir: string, databaseUrl = `file:${path.join(base, "data", "agent-reach.db")}`) => ({ dataDir, workspaceRoot: ws, databaseUrl });

describe("checkStoreOutsideWorkspace", () => {
  it.each([
    ["the data directory in the workspace", config(path.join(ws, "data"))],
    ["…not made yet, several levels down", config(path.join(ws, "a/b/c/data"))],
    ["…the workspace root itself", config(ws)],
    ["…through a link into the workspace", config(path.join(base, "link-into-ws", "data"))],
    ["…spelled with ..", config(path.join(base, "other", "..", "project", "data"))],
    ["the SQLite file in the workspace", config(path.join(base, "data"), `file:${path.join(ws, "sub", "audit.db")}`)],
  ])("refuses %s", (_label, c) => {
    expect(() => checkStoreOutsideWorkspace(c)).toThrow(/Refusing to start: the (data directory|SQLite database) .* is inside the workspace/);
  });

  it.each([
    ["a sibling data directory (the default layout)", config(path.join(base, "data"))],
    ["a workspace inside the data directory", { dataDir: base, workspaceRoot: ws, databaseUrl: `file:${path.join(base, "agent-reach.db")}` }],
    ["a name that only starts like the workspace", config(`${ws}-data`)],
    ["PostgreSQL", config(path.join(base, "data"), "postgresql://u@127.0.0.1:5432/db")],
  ])("accepts %s", (_label, c) => {
    expect(() => checkStoreOutsideWorkspace(c)).not.toThrow();
  });
});
