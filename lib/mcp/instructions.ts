/**
 * How a model should use Agent Reach's tools. Sent as the MCP
 * server's `instructions` in the `initialize` result (MCP spec, "Lifecycle":
 * InitializeResult.instructions) and served as markdown by `GET /api/agent-instructions`, so
 * agents on the HTTP door and the CLI can put the same text in their system prompt; the README
 * shows it too. One text, one place. Each tool's own description (lib/tools/*.ts) repeats what
 * matters for that tool.
 */
export const AGENT_INSTRUCTIONS = `# Agent Reach: how to use these tools

You reach the files and the shell of one workspace only through these tools. Every call is
written to an audit log, and risky calls wait for a human reviewer (which ones depends on the
supervision preset, below). Paths are relative to the workspace root (absolute paths inside it
also work); nothing outside the workspace can be reached.

## Supervision presets: what waits for a reviewer
The operator picks a preset per workspace or per agent token; a call that waits says under which
preset and which rule asked (\`error.detail.preset\`, \`error.detail.rule\`, \`error.detail.reasons\`). Whatever the preset, every change is backed up and
revertible, reading a secret (.env, keys, credentials) waits, writing outside the workspace and
deny rules are refused, and \`network: true\` on run_command and fetch_url wait.
- **strict**: every write_file, edit_file, restore_backup and every run_command that is not
  read-only waits for a reviewer.
- **balanced** (the default): writes and edits apply at once, except files that run later or
  change how things run (CI workflows, .husky and other git hooks, Makefile, package.json,
  .envrc, editor task files, shell rc files), git internals, and large deletions or rewrites
  (most of a big file), which wait. run_command runs in the sandbox at once; it waits to leave the
  box (network, paths outside the workspace, no sandbox available) or when a word it needs to
  judge is known only when it runs (\`cat $f\` in a loop: prefer literal paths, or a script file).
- **autonomous**: like balanced, but large rewrites apply at once too; only leaving the box,
  secrets, git internals and files that run later wait.
A call that waits is not an error in your work: it answers \`approval_pending\` (below). A command
whose file changes are **held** (\`changes.status: "held"\`, under every preset: many deletions,
secrets, git internals, files that run later) already ran in the box; its changes wait for a
reviewer and are not in the workspace until one applies them. Do not redo the change another
way: poll get_call with its call_id.

## Which tool
- Read with **read_file**, not \`cat\`, \`head\`, \`tail\` or \`sed -n\`. Lines come numbered as
  \`%6d| \`; the prefix is not part of the file.
- Change part of a file with **edit_file**, not \`sed -i\`, \`perl -i\`, \`awk\` or a heredoc. Copy
  \`old_string\` from read_file output without the line-number prefix and include enough context
  that it occurs exactly once; \`edit_no_match\` and \`edit_ambiguous\` tell you why and where.
- Create or replace a whole file with **write_file**, not \`echo >\`, \`cat <<EOF\` or \`tee\`. Pass
  \`expected_sha256\` (the \`sha256\` read_file reported) to write only if nobody changed the file
  since you read it. Edits and writes are backed up and shown as a diff; a shell command's
  writes are captured as a change set instead, which is harder to review.
- Find files with **list_directory** and **search_files** (glob on paths, text or regex inside
  files), not \`ls -R\`, \`find\` or \`grep -r\`.
- Convert JSON, YAML and CSV with **transform**, not jq/yq/python one-liners. Fetch a web page
  with **fetch_url**, not curl or wget (private and loopback addresses are blocked).
- Use **run_command** only to run programs: builds, tests, linters, formatters, package managers,
  git, project scripts. Whether a command waits for a reviewer depends on the preset (above).

## Paging and \`truncated\`
\`truncated: true\` always means you did not get everything:
- read_file: \`offset\` = lines to skip (0-based), \`limit\` = lines to return (default 80);
  \`total_lines\` is the length. Call again with \`offset\` = \`next_offset\` for the next page.
- list_directory and transform: call again with \`offset\` = \`next_offset\`.
- search_files: there are more matches than \`max_results\`; narrow \`path\`, \`pattern\` or \`include\`.
- run_command: the middle of the output was cut (\`original_length\` gives the full size in
  bytes); rerun with a narrower command (\`| tail -50\`, \`| grep error\`) or a larger
  \`max_output_chars\`.
- fetch_url: \`content\` is the beginning of the body only.

## Limits of run_command
Every command runs with a closed stdin (pass \`--yes\`-style flags), a minimal environment without
credentials, a private HOME, and resource limits: memory and number of processes for the whole
command, CPU time per process, largest file written, and the wall clock (\`timeout_ms\`). Background
jobs stop when the command ends. When a limit stops a command, \`limit\` says which ("memory",
"cpu", "processes", "file_size", "time") and \`limits\` lists the values it ran under. Do not rerun
it unchanged: make it lighter (fewer parallel jobs, a smaller input, a narrower test selection)
or tell the user which limit is in the way.

## Encodings
read_file, search_files and edit_file work on decoded text in every file's own encoding: UTF-8,
UTF-16 (by its BOM), and legacy ones such as GBK, GB18030, Big5, Shift_JIS, EUC-KR and
windows-1252. read_file says which (\`encoding\`, \`encoding_source\`, \`encoding_confidence\`);
edits and writes keep the file's encoding, BOM and line endings and change only the bytes you
replaced. New files are UTF-8 unless you pass \`encoding\`. \`encoding_unsupported\` means nothing
was written: with reason \`unrepresentable\` the file's encoding cannot hold the characters listed
in \`detail.characters\` (leave them out or use an escape); with reason \`uncertain_encoding\` the
encoding was only guessed (\`encoding_warning: "uncertain"\` on read): if the text read_file showed
looks right, repeat the call with \`encoding\` set to the reported encoding, else to the real one.

## Masked secrets
Values that look like credentials (cloud keys, private keys, tokens, passwords in config files,
connection strings) come back masked as \`[REDACTED:<kind>:<length>]\`, in every tool's output.
Work around them: never copy a marker into edit_file \`old_string\` or write_file \`content\` (it
would write the marker into the file); edit the lines next to it instead, and ask the user when
you need the real value.

## Results and errors
A failure carries \`error.name\` and \`error.code\`: 1xx your arguments, 2xx the file system or the
workspace fence, 3xx the network, 4xx a data format, 5xx internal, 6xx supervision. Read
\`error.message\` and \`error.detail\`; do not retry the same arguments unless \`retryable\` is true.

## Waiting for a reviewer
A call the policy asks about waits for a person: over MCP up to the server's bound (with progress
notifications when you send a progressToken), over HTTP for the seconds in \`Prefer: wait=N\` (or
the server's default). If nobody decides in time, it answers
\`approval_pending\` (601) with a \`call_id\`: the call is still queued, do not send it again. Call
**get_call** with that \`call_id\` and \`wait_ms\` (e.g. 30000) until it has finished, then use its
\`result\`. Meanwhile you may do other work that does not depend on it. \`approval_rejected\` (602)
carries the reviewer's reason: change your approach rather than retrying. \`policy_denied\` (604)
is final for those arguments. \`conflict\` (605) means the file changed while the call waited: read
it again and redo the change.

## Undo
Every write and edit keeps a backup (\`backup_id\` in its result). **list_backups** shows them and
**restore_backup** brings one back (the restore is itself backed up, and reviewed under strict).
A command's changes are undone with revert_call.
`;
