/**
 * Recognising database errors that mean "not now" (locked, down, unreachable) as opposed to bugs
 * or constraint violations. No imports: lib/errors.ts uses it, and it is loaded everywhere.
 */

/** Walks an error and its causes (Prisma wraps driver errors a few levels deep). */
function* errorChain(err: unknown): Generator<Record<string, unknown>> {
  let cur: unknown = err;
  for (let depth = 0; cur && typeof cur === "object" && depth < 6; depth++) {
    const e = cur as Record<string, unknown>;
    yield e;
    const meta = e.meta as Record<string, unknown> | undefined;
    cur = e.cause ?? meta?.driverAdapterError;
  }
}

/** True when `err` says a SQLite database is locked by another connection (SQLITE_BUSY). */
export function isDatabaseBusy(err: unknown): boolean {
  for (const e of errorChain(err)) {
    if (e.kind === "SocketTimeout") return true;
    if (typeof e.code === "string" && e.code.startsWith("SQLITE_BUSY")) return true;
  }
  return false;
}

/**
 * True when `err` means the database cannot be reached or used right now (locked past the busy
 * budget, server down, connection refused or lost, too many connections, pool timeout), as
 * opposed to a bug or a constraint. The doors answer these with 503 `unavailable`.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (const e of errorChain(err)) {
    const kind = typeof e.kind === "string" ? e.kind : "";
    if (["SocketTimeout", "DatabaseNotReachable", "DatabaseDoesNotExist", "DatabaseAccessDenied", "ConnectionClosed", "TooManyConnections", "TransactionAlreadyClosed"].includes(kind)) return true;
    const code = typeof e.code === "string" ? e.code : "";
    if (/^(P1001|P1002|P1008|P1017|P2024|P2028)$/.test(code)) return true;
    if (/^(SQLITE_BUSY|SQLITE_LOCKED|SQLITE_CANTOPEN|SQLITE_IOERR)/.test(code)) return true;
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|57P01|57P02|57P03|53300|08000|08001|08003|08006)$/.test(code)) return true;
    const message = typeof e.message === "string" ? e.message : "";
    if (/Connection terminated|connection timeout|Can't reach database server|database is locked|ECONNREFUSED|Transaction already closed|Unable to start a transaction in the given time/i.test(message)) return true;
  }
  return false;
}
