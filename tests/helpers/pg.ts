import crypto from "node:crypto";
import { inject } from "vitest";

/** The PostgreSQL base URL when this test runs in the "postgres" project, else null. */
export function testPgUrl(): string | null {
  try {
    return inject("pgUrl") ?? null;
  } catch {
    return null;
  }
}

/**
 * Creates a fresh, empty database on the test PostgreSQL server.
 * @returns its connection URL.
 */
export async function createPgDatabase(baseUrl: string): Promise<string> {
  const { Client } = await import("pg");
  const name = `ar_test_${crypto.randomBytes(6).toString("hex")}`;
  const admin = new Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
