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

/** The NOTIFY channel the instances announce events on. */
export const ANNOUNCE_CHANNEL = "agent_reach_events";
/** NOTIFY payloads must stay under 8000 bytes; larger event data is left out (listeners re-read the database). */
const MAX_PAYLOAD = 7000;

const globalForFanout = globalThis as unknown as { agentReachFanout?: { close(): Promise<void> } };

/**
 * The NOTIFY payloads that announce a batch of events to the other instances, as few as fit
 * (an event too large for one payload is announced without its data). The audit writer sends
 * them with `pg_notify(ANNOUNCE_CHANNEL, payload)` inside the batch's own transaction, so other
 * instances hear of exactly the events that were committed, when they are.
 */
export function announcementPayloads(events: BusEvent[]): string[] {
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
  return payloads;
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
    await client.query(`LISTEN ${ANNOUNCE_CHANNEL}`);
  };
  globalForFanout.agentReachFanout = {
    async close() {
      closed = true;
      await client?.end();
    },
  };
  await connect();
}
