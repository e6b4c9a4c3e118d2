/**
 * Errors of the agent-reach CLI and its exit status table (the README's "CLI" section):
 * 0 ok, 2 arguments (1xx), 3 file system / workspace (2xx), 4 network (3xx), 5 data format (4xx),
 * 6 supervision (6xx), 1 internal (5xx and anything unexpected). A process exit status cannot
 * hold 601, so the class of the error code decides. tests/cli/exit-table.test.ts checks that this
 * table gives every error name of lib/errors.ts the status its class documents.
 */

import { createRequire } from "node:module";

const EXIT_BY_CLASS = { 1: 2, 2: 3, 3: 4, 4: 5, 5: 1, 6: 6 };

/**
 * Exit status for an envelope error code.
 * @param {number} code e.g. 201.
 * @returns {number} 1-6.
 */
export function exitStatusForCode(code) {
  return EXIT_BY_CLASS[Math.floor(code / 100)] ?? 1;
}

/**
 * The closed error table of lib/errors.ts (code, HTTP status, retryable by name), as generated
 * into lib/cli/errors.json by scripts/gen-cli-tools.ts; read when the CLI first reports an error.
 * @type {Record<string, {code: number, status: number, retryable: boolean}> | undefined}
 */
let errorTable;

/** @returns {Record<string, {code: number, status: number, retryable: boolean}>} the error table by name. */
function errorTableOf() {
  return (errorTable ??= createRequire(import.meta.url)("./errors.json").errors);
}

/** A failure the CLI reports as an error envelope (`call_id: null`) and an exit status. */
export class CliError extends Error {
  /**
   * @param {string} name error name from the closed list (lib/errors.ts).
   * @param {string} message for a person or a model.
   * @param {Record<string, unknown>} [detail]
   */
  constructor(name, message, detail = {}) {
    super(message);
    this.errorName = name;
    this.detail = detail;
  }

  /** @returns {{ok: false, call_id: null, error: object}} the error envelope. */
  toEnvelope() {
    const { code, retryable } = errorTableOf()[this.errorName] ?? errorTableOf().internal;
    return {
      ok: false,
      call_id: null,
      error: { code, name: this.errorName, message: this.message, detail: this.detail, retryable, retry_after_ms: null },
    };
  }
}
