import { getConfig } from "@/lib/config";
import { dbProvider } from "@/lib/db";
import { publish, type BusEvent } from "@/lib/events/bus";

/**
 * Cross-instance fan-out of events through PostgreSQL LISTEN/NOTIFY: every instance NOTIFYs the
 * events it appends, and re-publishes on its own in-process bus the events other instances
 * announce, so SSE dashboards and waiting agents on every instance see every event.
 * On SQLite (one instance) this is a no-op. Waiters still poll the database, so a lost
 * notification only delays, never loses, an outcome.
 */

const CHANNEL = "agent_reach_events";
/** NOTIFY payloads must stay under 8000 bytes; larger event data is left out (listeners re-read the database). */
const MAX_PAYLOAD = 7000;

const globalForFanout = globalThis as unknown as { agentReachFanout?: { close(): Promise<void> } };

/** Announces `event` to the other instances (PostgreSQL only). Errors are logged, not raised. */
export async function announce(event: BusEvent): Promise<void> {
  if (dbProvider() !== "postgresql") return;
  try {
    const { db } = await import("@/lib/db");
    let payload = JSON.stringify({ origin: getConfig().hostId, event });
    if (payload.length > MAX_PAYLOAD) payload = JSON.stringify({ origin: getConfig().hostId, event: { ...event, data: {} } });
    await db().$executeRawUnsafe(`SELECT pg_notify('${CHANNEL}', $1)`, payload);
  } catch (err) {
    console.warn(`[agent-reach] NOTIFY failed: ${(err as Error).message}`);
  }
}

/**
 * Announces a committed batch of events to the other instances with as few NOTIFYs as fit
 * (PostgreSQL only; a no-op otherwise). Errors are logged, not raised.
 */
export async function announceAll(events: BusEvent[]): Promise<void> {
  if (events.length === 0 || dbProvider() !== "postgresql") return;
  const origin = getConfig().hostId;
  const payloads: string[] = [];
  let group: BusEvent[] = [];
  let size = 0;
  const flush = () => {
    if (group.length > 0) payloads.push(JSON.stringify({ origin, events: group }));
    group = [];
    size = 0;
  };
  for (const event of events) {
    let one = event;
    let length = JSON.stringify(one).length + 1;
    if (length > MAX_PAYLOAD - 200) {
      one = { ...event, data: {} };
      length = JSON.stringify(one).length + 1;
    }
    if (size + length > MAX_PAYLOAD - 200) flush();
    group.push(one);
    size += length;
  }
  flush();
  try {
    const { db } = await import("@/lib/db");
    for (const payload of payloads) await db().$executeRawUnsafe(`SELECT pg_notify('${CHANNEL}', $1)`, payload);
  } catch (err) {
    console.warn(`[agent-reach] NOTIFY failed: ${(err as Error).message}`);
  }
}

/**
 * Starts listening for other instances' events (PostgreSQL only; idempotent). Reconnects after
 * a lost connection with a 1 s back-off.
 */
export async function startFanout(): Promise<void> {
  if (dbProvider() !== "postgresql" || globalForFanout.agentReachFanout) return;
  const { Client } = await import("pg");
  const self = getConfig().hostId;
  let client: InstanceType<typeof Client> | null = null;
  let closed = false;
  const connect = async () => {
    if (closed) return;
    client = new Client({ connectionString: getConfig().databaseUrl });
    client.on("notification", (msg) => {
      try {
        const { origin, event, events } = JSON.parse(msg.payload ?? "{}") as { origin: string; event?: BusEvent; events?: BusEvent[] };
        if (origin === self) return;
        for (const e of events ?? (event ? [event] : [])) publish(e);
      } catch {
        /* not ours */
      }
    });
    client.on("error", () => {
      client?.end().catch(() => {});
      setTimeout(() => void connect().catch(() => {}), 1000).unref();
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
  };
  globalForFanout.agentReachFanout = {
    async close() {
      closed = true;
      await client?.end();
    },
  };
  await connect();
}
