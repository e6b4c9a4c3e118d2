import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ERROR_TABLE, exitStatusOf, type ErrorName } from "@/lib/errors";

/**
 * The CLI is plain JavaScript and keeps its own copy of the exit-status table; this keeps both in
 * step: for every error name, the CLI's status for its code equals lib/errors.ts `exitStatusOf`.
 */
const load = (file: string) => import(pathToFileURL(path.resolve(__dirname, "../../lib/cli", file)).href);

describe("CLI exit status table", () => {
  it.each(Object.keys(ERROR_TABLE) as ErrorName[])("%s maps to the same exit status as lib/errors.ts", async (name) => {
    const { exitStatusForCode } = await load("errors.mjs");
    expect(exitStatusForCode(ERROR_TABLE[name].code)).toBe(exitStatusOf(name));
  });

  it("every error the CLI raises itself has the code lib/errors.ts gives its name", async () => {
    const { CliError } = await load("errors.mjs");
    for (const name of ["invalid_arguments", "unknown_tool", "not_found", "write_failed", "fetch_failed", "fetch_timeout", "encoding_unsupported", "internal", "unauthorized"] as ErrorName[]) {
      const envelope = new CliError(name, "m").toEnvelope();
      expect(envelope.error.code).toBe(ERROR_TABLE[name].code);
      expect(envelope.error.retryable).toBe(ERROR_TABLE[name].retryable);
    }
  });
});
