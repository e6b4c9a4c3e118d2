/**
 * The closed list of error names Agent Reach returns, each mapped once to its numeric code
 * (code classes: 1xx arguments, 2xx file system / workspace, 3xx network,
 * 4xx data format, 5xx internal, 6xx supervision), its HTTP status and whether retrying the
 * same call can help. The CLI ships a copy generated from this table (lib/cli/errors.json,
 * scripts/gen-cli-tools.ts) and derives its exit status from the class.
 *
 * Errors travel as values (`ErrorBody` inside the envelope). Inside lib/, code that is deep in
 * a call stack may `throw new ToolError(name, …)`; the gateway catches it at one boundary and
 * turns it into the value. Anything else thrown is a bug and becomes `internal` without a
 * stack trace.
 */
import { isDatabaseUnavailable } from "@/lib/db-errors";

interface ErrorSpec {
  /** Numeric code; its hundreds digit is the class. */
  code: number;
  /** HTTP status of the plain HTTP door. */
  status: number;
  /** True when the same call may succeed later without changing its arguments. */
  retryable: boolean;
  /**
   * The status a tool call that ends with this error is recorded with: "failed" when the tool
   * tried and something broke (a write, a start, a fetch), "conflict" when the target changed
   * since the call was queued. Absent: "rejected" (the call was refused: its arguments, the
   * fence, the policy, the content it found).
   */
  callStatus?: "failed" | "conflict";
}

export const ERROR_TABLE = {
  // 1xx: bad arguments
  invalid_arguments: { code: 101, status: 400, retryable: false },
  unknown_tool: { code: 102, status: 404, retryable: false },
  path_invalid: { code: 103, status: 400, retryable: false },
  offset_out_of_range: { code: 104, status: 400, retryable: false },
  edit_no_match: { code: 105, status: 422, retryable: false },
  edit_ambiguous: { code: 106, status: 422, retryable: false },
  edit_noop: { code: 107, status: 422, retryable: false },
  edit_empty_old_string: { code: 108, status: 422, retryable: false },
  payload_too_large: { code: 109, status: 413, retryable: false },
  /** An HTTP method the route does not take (405, with an `Allow` header naming those it does). */
  method_not_allowed: { code: 110, status: 405, retryable: false },
  // 2xx: file system and workspace
  path_outside_workspace: { code: 201, status: 403, retryable: false },
  not_found: { code: 202, status: 404, retryable: false },
  is_directory: { code: 203, status: 400, retryable: false },
  stale_content: { code: 204, status: 409, retryable: false },
  write_failed: { code: 205, status: 500, retryable: true, callStatus: "failed" },
  command_failed_to_start: { code: 206, status: 500, retryable: true, callStatus: "failed" },
  // 3xx: network
  ssrf_blocked: { code: 301, status: 403, retryable: false },
  fetch_failed: { code: 302, status: 502, retryable: true, callStatus: "failed" },
  fetch_timeout: { code: 303, status: 502, retryable: true, callStatus: "failed" },
  // 4xx: data format
  binary_file: { code: 401, status: 415, retryable: false },
  encoding_unsupported: { code: 402, status: 415, retryable: false },
  transform_failed: { code: 403, status: 422, retryable: false },
  // 5xx: internal
  internal: { code: 500, status: 500, retryable: true, callStatus: "failed" },
  /** The database cannot be reached or is locked past its wait bound; nothing ran. */
  unavailable: { code: 503, status: 503, retryable: true },
  // 6xx: supervision
  approval_pending: { code: 601, status: 202, retryable: true },
  approval_rejected: { code: 602, status: 403, retryable: false },
  approval_expired: { code: 603, status: 403, retryable: false },
  policy_denied: { code: 604, status: 403, retryable: false },
  conflict: { code: 605, status: 409, retryable: false, callStatus: "conflict" },
  unauthorized: { code: 606, status: 401, retryable: false },
  forbidden: { code: 607, status: 403, retryable: false },
} as const satisfies Record<string, ErrorSpec>;

/** One of the closed list of error names. */
export type ErrorName = keyof typeof ERROR_TABLE;

/**
 * The values `detail.reason` may take, per error name: a machine-readable refinement of the name
 * that clients branch on, so each list is closed like the table above. A name without an entry
 * carries no `reason`. `approval_rejected` is the exception: its reason is the reviewer's own
 * words (free text), which `FREE_TEXT_REASON` marks.
 */
export const FREE_TEXT_REASON = "*free text*";
export const ERROR_REASONS = {
  invalid_arguments: [
    "too_deep", "invalid_url", "credentials_in_url", "empty_host", "scheme_not_allowed", "lone_surrogate",
    "invalid_glob", "invalid_regex", "regex_timeout", "regex_too_complex", "query_too_long", "missing_pattern_or_query",
    "grant_refused", "not_editable", "not_a_file_change",
  ],
  path_invalid: [
    "empty", "nul_byte", "control_char", "backslash", "windows_drive_or_unc", "ads_stream", "invalid_unicode", "too_long",
    "symlink_loop", "not_a_directory", "not_regular_file",
  ],
  payload_too_large: ["file_too_large"],
  path_outside_workspace: ["lexical", "symlink", "parent_symlink", "changed_during_call"],
  not_found: [
    "parent_missing", "parent_not_directory", "changed_during_call", "backup_not_found", "call_not_found", "call_not_in_session",
    "session_not_found", "no_changes",
  ],
  write_failed: ["enospc", "eacces", "eperm", "erofs", "io", "target_changed", "apply_failed", "apply_interrupted"],
  command_failed_to_start: [
    "sandbox_failed", "limits_failed", "aborted", "capture_failed", "capture_needs_sandbox", "capture_unavailable",
    "shell_not_found", "cwd_not_found", "spawn_failed", "eacces", "eagain", "emfile", "enfile", "enomem", "eperm", "e2big",
    "enotdir", "eloop", "enametoolong", "einval", "secret_scan_limit",
  ],
  ssrf_blocked: [
    "metadata", "loopback", "private", "link_local", "unique_local", "cgnat", "multicast", "broadcast", "unspecified",
    "reserved", "ipv6_transition", "invalid_address", "localhost", "scheme_not_allowed",
  ],
  fetch_failed: [
    "dns", "connection_refused", "connection_reset", "unreachable", "tls", "port_blocked", "aborted", "network",
    "bad_redirect", "too_many_redirects", "redirect_with_credentials",
  ],
  binary_file: ["nul_byte", "non_text_bytes"],
  encoding_unsupported: [
    "bom_mismatch", "utf16_without_bom", "invalid_utf8", "utf16_odd_length", "undecodable", "unknown_encoding",
    "uncertain_encoding", "unrepresentable", "not_round_trip", "replacement_character", "lossy_rewrite",
  ],
  internal: ["interrupted", "capture_damaged", "change_set_missing"],
  approval_rejected: [FREE_TEXT_REASON],
  conflict: ["already_decided", "already_ended", "directory_not_empty", "type_changed", "not_pending", "changed_since", "changed_during_call"],
  unauthorized: ["throttled"],
  forbidden: ["host_not_allowed", "not_reproducible", "arguments_masked", "other_workspace", "policy_keeps_masked", "default_rule"],
} as const satisfies { [N in ErrorName]?: readonly string[] };

/** The `detail.reason` values declared for `N` (`string` where the reason is free text, `never` where there is none). */
export type ErrorReason<N extends ErrorName> = N extends keyof typeof ERROR_REASONS
  ? (typeof ERROR_REASONS)[N][number] extends typeof FREE_TEXT_REASON
    ? string
    : (typeof ERROR_REASONS)[N][number]
  : never;

/** The `detail` of an error named `N`: any JSON-serialisable members, with `reason` one of `ErrorReason<N>`. */
export type ErrorDetail<N extends ErrorName = ErrorName> = { reason?: ErrorReason<N> } & Record<string, unknown>;

/** The `error` member of a failure envelope (lib/result.ts). */
export interface ErrorBody {
  code: number;
  name: ErrorName;
  message: string;
  detail: Record<string, unknown>;
  retryable: boolean;
  /** Milliseconds after which a retry makes sense, or null. */
  retry_after_ms: number | null;
}

/**
 * A typed failure raised inside lib/ and turned into an `ErrorBody` by the gateway.
 * `detail` must be JSON-serialisable and must not hold secrets or stack traces.
 */
export class ToolError<N extends ErrorName = ErrorName> extends Error {
  readonly errorName: N;
  readonly detail: ErrorDetail<N>;
  readonly retryAfterMs: number | null;

  constructor(
    name: N,
    message: string,
    detail: ErrorDetail<N> = {},
    options: { retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "ToolError";
    this.errorName = name;
    this.detail = detail;
    this.retryAfterMs = options.retryAfterMs ?? null;
  }

  /** The wire form of this error. */
  toBody(): ErrorBody {
    return errorBody(this.errorName, this.message, this.detail, this.retryAfterMs);
  }
}

/**
 * `write_failed` reasons that describe the machine's state rather than a fault of the server, with
 * the HTTP status and retryability they get instead of the table's 500 / retryable: a full disk
 * or quota (RFC 4918 507 Insufficient Storage), a read-only file system (507: the storage cannot
 * take the bytes), a permission the file system refuses (403). Retrying the same call cannot help
 * until an operator frees space or changes the mount or the permissions.
 */
export const WRITE_FAILED_BY_REASON: Readonly<Record<string, { status: number; retryable: boolean }>> = {
  enospc: { status: 507, retryable: false },
  erofs: { status: 507, retryable: false },
  eacces: { status: 403, retryable: false },
};

/** The spec of `name`, refined by `detail.reason` where the table above says so. */
function specOf(name: ErrorName, detail: Record<string, unknown> | undefined): ErrorSpec {
  const spec: ErrorSpec = ERROR_TABLE[name];
  const reason = detail?.reason;
  if (name === "write_failed" && typeof reason === "string" && Object.hasOwn(WRITE_FAILED_BY_REASON, reason)) {
    return { ...spec, ...WRITE_FAILED_BY_REASON[reason] };
  }
  return spec;
}

/** Builds an `ErrorBody` for `name` from the table (retryable refined by `detail.reason`, see `WRITE_FAILED_BY_REASON`). */
export function errorBody<N extends ErrorName>(
  name: N,
  message: string,
  detail: ErrorDetail<N> = {},
  retryAfterMs: number | null = null,
): ErrorBody {
  const spec = specOf(name, detail);
  return { code: spec.code, name, message, detail, retryable: spec.retryable, retry_after_ms: retryAfterMs };
}

/** `write_failed` reasons of the errno codes with which a file system refuses an operation. */
const REFUSED_REASON = { EACCES: "eacces", EPERM: "eperm", EROFS: "erofs" } as const;

/**
 * Converts anything thrown into an `ErrorBody`. A `ToolError` keeps its name and detail;
 * Node file-system errors that escaped a tool map to their closest name; everything else is
 * `internal` with a generic message (the real error is for the server log only).
 */
export function toErrorBody(err: unknown): ErrorBody {
  if (err instanceof ToolError) return err.toBody();
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    // Input nested so deeply that a recursive parser or printer ran out of stack: the input's
    // fault, and retrying the same input cannot help.
    return errorBody("invalid_arguments", "The input is nested too deeply to process.", { reason: "too_deep" });
  }
  if (isDatabaseUnavailable(err)) {
    return errorBody("unavailable", "The database is unavailable right now (locked or unreachable); nothing was run. Retry shortly.", {}, 1000);
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return errorBody("not_found", "No such file or directory.");
    case "EISDIR":
      return errorBody("is_directory", "The path is a directory.");
    case "ENOSPC":
      return errorBody("write_failed", "No space left on the device.", { reason: "enospc" });
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return errorBody("write_failed", "The file system refused the operation.", { reason: REFUSED_REASON[code] });
    default:
      return errorBody("internal", "Internal error; the call was recorded and can be inspected by a reviewer.");
  }
}

/** The status a call that ended with this error is recorded with (see `ErrorSpec.callStatus`). */
export function callStatusOf(name: ErrorName): "failed" | "conflict" | "rejected" {
  const spec: ErrorSpec = ERROR_TABLE[name];
  return spec.callStatus ?? "rejected";
}

/** HTTP status for an error name, refined by its `detail.reason` (e.g. 507 for `write_failed` "enospc"). */
export function httpStatusOf(name: ErrorName, detail?: Record<string, unknown>): number {
  return specOf(name, detail).status;
}
