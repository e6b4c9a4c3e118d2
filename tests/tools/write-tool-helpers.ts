import fs from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { ToolError } from "@/lib/errors";
import type { ToolContext, ToolDefinition } from "@/lib/tools/define-tool";
import { sha256Hex } from "@/lib/workspace/text";

/** Shared by the write-side tool tests (write_file, edit_file, list_backups, restore_backup). */

export type Outcome = { ok: true; data: Record<string, unknown> } | { ok: false; error: ToolError };

/** Parses `args` with the tool's own schema (defaults applied, as the gateway does) and runs it. */
export async function call(tool: ToolDefinition, args: Record<string, unknown>, ctx: ToolContext): Promise<Outcome> {
  try {
    const data = (await tool.run(tool.input.parse(args), ctx)) as Record<string, unknown>;
    return { ok: true, data };
  } catch (err) {
    if (err instanceof ToolError) return { ok: false, error: err };
    throw err;
  }
}

/** Asserts success and returns the data. */
export function okData(outcome: Outcome): Record<string, unknown> {
  if (!outcome.ok) throw new Error(`expected ok, got ${outcome.error.errorName}: ${outcome.error.message} ${JSON.stringify(outcome.error.detail)}`);
  return outcome.data;
}

/** Asserts a failure with `name` (and `detail` as a subset) and returns the error. */
export function expectError(outcome: Outcome, name: string, detail: Record<string, unknown> = {}): ToolError {
  if (outcome.ok) throw new Error(`expected ${name}, got ok: ${JSON.stringify(outcome.data).slice(0, 300)}`);
  expect(outcome.error.errorName).toBe(name);
  expect(outcome.error.detail).toMatchObject(detail);
  return outcome.error;
}

export const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ""), "hex");

export const shaOf = (s: string | Buffer): string => sha256Hex(typeof s === "string" ? Buffer.from(s) : s);

/** Every temp file left anywhere under `dir` (atomic writes name theirs `*.tmp`). */
export async function tempFiles(dir: string): Promise<string[]> {
  const all = await fs.readdir(dir, { recursive: true });
  return all.filter((p) => p.endsWith(".tmp"));
}

/**
 * A picture of everything under `dir`: each entry's type and its bytes' sha256 or link target.
 * Two equal snapshots mean nothing was created, removed or changed.
 */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const rel of (await fs.readdir(dir, { recursive: true })).sort()) {
    const p = path.join(dir, rel);
    const st = await fs.lstat(p);
    if (st.isSymbolicLink()) out[rel] = `link:${await fs.readlink(p)}`;
    else if (st.isDirectory()) out[rel] = "dir";
    else out[rel] = `file:${(st.mode & 0o7777).toString(8)}:${shaOf(await fs.readFile(p))}`;
  }
  return out;
}
