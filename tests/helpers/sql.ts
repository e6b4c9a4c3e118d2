import Database from "better-sqlite3";

/**
 * Runs one SQL statement against a test server's database, SQLite or PostgreSQL, for tests that
 * inspect or prepare rows behind the product's back. Write placeholders as `$1, $2…` and quote
 * identifiers ("ToolCall"); for SQLite they become `?`, booleans 1/0 and dates ISO strings.
 * @returns the rows (empty for statements that return none).
 */
export async function sql<T = Record<string, unknown>>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  if (url.startsWith("file:")) {
    const conn = new Database(url.slice(5));
    try {
      const stmt = conn.prepare(text.replace(/\$\d+/g, "?"));
      const values = params.map((p) => (typeof p === "boolean" ? Number(p) : p instanceof Date ? p.toISOString() : p));
      return stmt.reader ? (stmt.all(...values) as T[]) : (stmt.run(...values), []);
    } finally {
      conn.close();
    }
  }
  const { Client } = await import("pg");
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}
