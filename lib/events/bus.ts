import { EventEmitter } from "node:events";

/**
 * In-process publish/subscribe for live updates: the dashboard's SSE stream and agents waiting
 * for a decision subscribe here. Cross-instance fan-out (PostgreSQL LISTEN/NOTIFY) plugs in
 * behind `publish` later; waiters also poll the database so nothing depends on this bus alone.
 */
export interface BusEvent {
  /** Event sequence number in the audit chain. */
  seq: number;
  type: string;
  callId: string | null;
  actor: string;
  data: Record<string, unknown>;
  createdAt: string;
}

const globalForBus = globalThis as unknown as { agentReachBus?: EventEmitter };

function bus(): EventEmitter {
  if (!globalForBus.agentReachBus) {
    globalForBus.agentReachBus = new EventEmitter();
    globalForBus.agentReachBus.setMaxListeners(0);
  }
  return globalForBus.agentReachBus;
}

/** Delivers `event` to every subscriber in this process. */
export function publish(event: BusEvent): void {
  bus().emit("event", event);
  if (event.callId) bus().emit(`call:${event.callId}`, event);
}

/** Delivers several events, in order (one committed batch of the audit writer). */
export function publishAll(events: BusEvent[]): void {
  for (const event of events) publish(event);
}

/** Subscribes to every event; returns the unsubscribe function. */
export function subscribe(listener: (event: BusEvent) => void): () => void {
  bus().on("event", listener);
  return () => bus().off("event", listener);
}

/** Subscribes to the events of one call; returns the unsubscribe function. */
export function subscribeCall(callId: string, listener: (event: BusEvent) => void): () => void {
  bus().on(`call:${callId}`, listener);
  return () => bus().off(`call:${callId}`, listener);
}
