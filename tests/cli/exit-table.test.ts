import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ERROR_TABLE, type ErrorName } from "@/lib/errors";
import { cliErrorsJson } from "@/scripts/gen-cli-tools";

/**
 * The CLI's exit status for every error of the closed table (lib/errors.ts), by the class of its
 * code as the README documents: 2 arguments (1xx), 3 file system (2xx), 4 network (3xx), 5 data
 * format (4xx), 1 internal (5xx), 6 supervision (6xx).
 */
const DOCUMENTED: Record<number, number> = { 1: 2, 2: 3, 3: 4, 4: 5, 5: 1, 6: 6 };
const load = (file: string) => import(pathToFileURL(path.resolve(__dirname, "../../lib/cli", file)).href);

describe("CLI exit status table", () => {
  it.each(Object.keys(ERROR_TABLE) as ErrorName[])("%s maps to the exit status its class documents", async (name) => {
    const { exitStatusForCode } = await load("errors.mjs");
    expect(exitStatusForCode(ERROR_TABLE[name].code)).toBe(DOCUMENTED[Math.floor(ERROR_TABLE[name].code / 100)]);
  });

  it("the CLI's error table is exactly what scripts/gen-cli-tools.ts writes from lib/errors.ts (run it after changing the table)", () => {
    expect(fs.readFileSync(path.resolve(__dirname, "../../lib/cli/errors.json"), "utf8")).toBe(cliErrorsJson());
  });

  it("every error the CLI raises has the code and retryability lib/errors.ts gives its name", async () => {
    const { CliError } = await load("errors.mjs");
    for (const name of Object.keys(ERROR_TABLE) as ErrorName[]) {
      const envelope = new CliError(name, "m").toEnvelope();
      expect(envelope.error.code).toBe(ERROR_TABLE[name].code);
      expect(envelope.error.retryable).toBe(ERROR_TABLE[name].retryable);
    }
  });
});
