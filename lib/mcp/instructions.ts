/**
 * How a model should use Agent Reach's tools. Sent as the MCP server's `instructions` in the
 * `initialize` result (MCP spec, "Lifecycle": InitializeResult.instructions) and served as
 * markdown by `GET /api/agent-instructions`, so agents on the HTTP door and the CLI can put the
 * same text in their system prompt. One text, one place.
 */
export const AGENT_INSTRUCTIONS = `# Agent Reach: how to use these tools

You reach the files and the shell of one workspace only through these tools. Every call is
written to an audit log, and risky calls (writes, edits, most shell commands, URL fetches)
wait for a human reviewer. Paths are relative to the workspace root (absolute paths inside it
also work); nothing outside the workspace can be reached.

## Prefer the file tools to the shell
- Read with **read_file**, not \`cat\`, \`head\`, \`tail\` or \`sed -n\`. It pages: \`offset\` = lines to
  skip (0-based), \`limit\` = lines to return (default 80). Lines come numbered as \`%6d| \`; the
  prefix is not part of the file. When \`truncated\` is true, the page does not reach the end of
  the file: call again with \`offset\` = \`next_offset\`. \`total_lines\` tells you the length.
- Change files with **edit_file**, not \`sed -i\`, \`perl -i\` or a heredoc. Copy \`old_string\` from
  read_file output without the line-number prefix and include enough context that it occurs
  exactly once; \`edit_no_match\` and \`edit_ambiguous\` tell you why and where.
- Create or replace a whole file with **write_file**. Pass \`expected_sha256\` (the \`sha256\` that
  read_file reported) to write only if nobody changed the file since you read it.
- Find files with **list_directory** and **search_files** (glob on paths, text or regex inside
  files), not \`ls -R\`, \`find\` or \`grep -r\`.
- Convert JSON, YAML and CSV with **transform**. Fetch a web page with **fetch_url** (private and
  loopback addresses are blocked).
- Use **run_command** for builds, tests and git. Read-only commands run at once; others wait for
  a reviewer. Output is capped: \`truncated\` and \`original_length\` say when it was cut.

## Results and errors
A failure carries \`error.name\` and \`error.code\`: 1xx your arguments, 2xx the file system or the
workspace fence, 3xx the network, 4xx a data format, 5xx internal, 6xx supervision. Read
\`error.message\` and \`error.detail\`; do not retry the same arguments unless \`retryable\` is true.

## Waiting for a reviewer
A call the policy asks about waits for a person. If nobody decides in time, it answers
\`approval_pending\` (601) with a \`call_id\`: the call is still queued, do not send it again. Call
**get_call** with that \`call_id\` (and \`wait_ms\`, e.g. 30000) until it has finished, then use its
\`result\`. \`approval_rejected\` (602) carries the reviewer's reason: change your approach rather
than retrying. \`policy_denied\` (604) is final for those arguments. \`conflict\` (605) means the
file changed while the call waited: read it again and redo the change.

## Undo
Every write and edit keeps a backup (\`backup_id\` in its result). **list_backups** shows them and
**restore_backup** brings one back (the restore is itself reviewed and backed up).
`;
