import { z } from "zod";
import { defineTool } from "@/lib/tools/define-tool";
import { resolveInWorkspace } from "@/lib/workspace/fence";

/**
 * list_backups: the backups of the workspace, newest first, optionally of one file. A path is
 * fenced like any other, so a symlink lists the backups of its target (the path writes through it
 * are recorded under).
 */

export const ListBackupsInput = z
  .object({
    path: z
      .string()
      .optional()
      .describe("Only backups of this file (relative to the workspace root, or absolute inside it). Omit to list the backups of every file."),
    offset: z.number().int().min(0).default(0).describe("Number of backups to skip, for paging (default 0)."),
    limit: z.number().int().min(1).max(200).default(50).describe("Maximum number of backups to return, 1-200 (default 50)."),
  })
  .strict();

/** JSON Schema source of list_backups' `data`. */
const ListBackupsOutput = z.looseObject({
  path: z.string().nullable(),
  total: z.number().int(),
  offset: z.number().int(),
  limit: z.number().int(),
  next_offset: z.number().int().nullable(),
  backups: z.array(
    z.looseObject({
      id: z.string(),
      path: z.string(),
      sha256: z.string(),
      size_bytes: z.number().int(),
      mode: z.string(),
      call_id: z.string(),
      created_at: z.string(),
    }),
  ),
});

export const listBackupsTool = defineTool({
  name: "list_backups",
  title: "List backups",
  description: [
    "List the backups Agent Reach kept of files that write_file, edit_file or restore_backup replaced, newest first.",
    "Each of backups has id (pass it to restore_backup as backup_id), path, sha256, size_bytes, mode, call_id (the call that replaced those bytes) and created_at.",
    "Page with offset and limit; next_offset is null on the last page.",
  ].join(" "),
  input: ListBackupsInput,
  risk: "read",
  output: ListBackupsOutput,
  subject: (args) => ({ paths: args.path === undefined ? [] : [args.path] }),
  async run(args, ctx) {
    let path: string | undefined;
    if (args.path !== undefined) {
      ctx.note({ pathRaw: args.path });
      const fenced = await resolveInWorkspace(ctx.workspace, args.path);
      ctx.note({ pathResolved: fenced.absolute, target: fenced.relative });
      path = fenced.relative;
    }
    const { items, total } = await ctx.backups.list({ path, offset: args.offset, limit: args.limit });
    const next = args.offset + items.length;
    return {
      path: path ?? null,
      total,
      offset: args.offset,
      limit: args.limit,
      next_offset: next < total ? next : null,
      backups: items.map((b) => ({
        id: b.id,
        path: b.path,
        sha256: b.sha256,
        size_bytes: b.size,
        mode: b.mode.toString(8).padStart(4, "0"),
        call_id: b.callId,
        created_at: b.createdAt.toISOString(),
      })),
    };
  },
});
