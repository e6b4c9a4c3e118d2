import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { getConfig } from "@/lib/config";
import { backupStoreFor } from "@/lib/backups/store";
import { runCommand } from "@/lib/exec/run-command";
import { runWithEffects } from "@/lib/effects/command-effects";
import type { PolicyRuleData, PresetName } from "@/lib/policy/types";
import type { ToolContext, Workspace } from "@/lib/tools/define-tool";

let n = 0;

/**
 * Runs `command` in `ws` the way run_command does, with its file changes captured on a real
 * overlay, staged, backed up (database store) and applied or held (lib/effects). Shared by the
 * in-process effects tests. `reviewEffects` sets the rule option that holds every change set.
 * @returns the call id and runWithEffects' answer
 */
export async function runBoxed(ws: Workspace, command: string, opts: { reviewEffects?: boolean; sandbox?: boolean; secretRules?: readonly PolicyRuleData[]; cwd?: string; preset?: PresetName; allowedWithoutAsking?: boolean } = {}) {
  const callId = `call_fx_${++n}_${crypto.randomBytes(3).toString("hex")}`;
  const ctx: ToolContext = {
    callId,
    workspace: ws,
    config: getConfig(),
    signal: new AbortController().signal,
    note: () => {},
    backups: backupStoreFor(ws.id, callId),
    ...(opts.reviewEffects && { ruleOptions: { review_effects: true } }),
    ...(opts.preset && { preset: opts.preset }),
    ...(opts.allowedWithoutAsking && { allowedWithoutAsking: true }),
  };
  const fx = await runWithEffects(ctx, {
    command,
    cwdAbs: ws.root,
    commandData: { command, cwd: "." },
    boxed: opts.sandbox === true,
    run: (capture, line) =>
      runCommand({
        command: line,
        cwd: opts.cwd ?? ws.root,
        timeoutMs: 30_000,
        maxOutputChars: 10_000,
        env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8" },
        ...(opts.sandbox && { sandbox: { workspaceRoot: ws.root, home: null, network: false, ...(opts.secretRules && { secretRules: opts.secretRules }) } }),
        ...(opts.sandbox && capture && { capture }),
      }),
  });
  return { callId, ...fx };
}

/** Empties the workspace root between tests. */
export function emptyWorkspace(ws: Workspace): void {
  // Names as bytes: a name that is not valid UTF-8 would decode into one that names nothing.
  const root = Buffer.from(`${ws.root}/`);
  for (const name of fs.readdirSync(ws.root, { encoding: "buffer" })) fs.rmSync(Buffer.concat([root, name]), { recursive: true, force: true });
}
