import { z } from "zod";

/** Input fields shared by several tools (parts of a tool definition's `input` schema). */

/**
 * The optional `expected_sha256` argument of the tools that replace a file's content (write_file,
 * edit_file, restore_backup): the content hash the agent last saw, 64 hexadecimal digits in
 * either case. The write pipeline (lib/workspace/update-file.ts) refuses with `stale_content`
 * when the file's content hash differs.
 *
 * @param description what the argument does for this tool, written for a model.
 */
export function expectedSha256Field(description: string) {
  return z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, "expected_sha256 must be 64 hexadecimal digits")
    .optional()
    .describe(description);
}
