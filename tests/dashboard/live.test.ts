import { beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";

/**
 * The dashboard's server-sent event stream (lib/dashboard/live.ts) on a real database: it starts
 * after a cursor, sends each audit event once in seq order with its seq as the SSE id, sends the
 * pending count after call events, and resumes after a Last-Event-ID without gaps.
 */

type Lib = { live: typeof import("@/lib/dashboard/live"); events: typeof import("@/lib/audit/events") };
let lib: Lib;

beforeAll(async () => {
  await useFreshDatabase();
  lib = { live: await import("@/lib/dashboard/live"), events: await import("@/lib/audit/events") };
});

interface Message {
  event: string;
  id?: string;
  data: unknown;
}

/** Reads SSE messages until `until` returns true (or 5 s pass), then closes the stream. */
async function collect(stream: ReadableStream<Uint8Array>, abort: AbortController, until: (m: Message[]) => boolean): Promise<Message[]> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const messages: Message[] = [];
  let buffer = "";
  const deadline = Date.now() + 5000;
  while (!until(messages) && Date.now() < deadline) {
    const { value } = await Promise.race([reader.read(), new Promise<{ value: undefined }>((r) => setTimeout(() => r({ value: undefined }), 250))]);
    if (value) buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields = Object.fromEntries(block.split("\n").filter((l) => !l.startsWith(":") && l.includes(": ")).map((l) => [l.slice(0, l.indexOf(": ")), l.slice(l.indexOf(": ") + 2)]));
      if (fields.event) messages.push({ event: fields.event, id: fields.id, data: JSON.parse(fields.data) });
    }
  }
  abort.abort();
  return messages;
}

describe("live event stream", () => {
  it("says hello with the cursor, then streams new events in order with their seq as id", async () => {
    await lib.events.appendEvent({ type: "test.before", actor: "system" });
    const start = await lib.live.latestEventSeq();
    const abort = new AbortController();
    const stream = lib.live.liveEventStream(null, abort.signal);
    const reading = collect(stream, abort, (m) => m.filter((x) => x.event === "audit").length >= 2 && m.some((x) => x.event === "pending"));
    await new Promise((r) => setTimeout(r, 100));
    await lib.events.appendEvent({ type: "call.pending", callId: "call_x", actor: "system", data: { tool: "write_file" } });
    await lib.events.appendEvent({ type: "test.after", actor: "reviewer:admin" });
    const messages = await reading;
    expect(messages[0]).toEqual({ event: "hello", id: undefined, data: { seq: start, pending: 0 } });
    const audit = messages.filter((m) => m.event === "audit");
    expect(audit.map((m) => (m.data as { type: string }).type)).toEqual(["call.pending", "test.after"]);
    expect(audit.map((m) => Number(m.id))).toEqual([start + 1, start + 2]);
    expect(messages.find((m) => m.event === "pending")?.data).toEqual({ count: 0 });
  });

  it("replays what a client missed after Last-Event-ID (or since=), and nothing twice", async () => {
    const from = await lib.live.latestEventSeq();
    await lib.events.appendEvent({ type: "test.missed.1", actor: "system" });
    await lib.events.appendEvent({ type: "test.missed.2", actor: "system" });
    const abort = new AbortController();
    const messages = await collect(lib.live.liveEventStream(String(from), abort.signal), abort, (m) => m.filter((x) => x.event === "audit").length >= 2);
    expect(messages.filter((m) => m.event === "audit").map((m) => (m.data as { type: string }).type)).toEqual(["test.missed.1", "test.missed.2"]);
  });

  it("ignores a cursor that is not a number or lies in the future", async () => {
    const latest = await lib.live.latestEventSeq();
    for (const cursor of ["abc", String(latest + 1000)]) {
      const abort = new AbortController();
      const messages = await collect(lib.live.liveEventStream(cursor, abort.signal), abort, (m) => m.length >= 1);
      expect(messages[0]).toMatchObject({ event: "hello", data: { seq: latest } });
    }
  });

  it("formats one message per the SSE grammar", () => {
    expect(lib.live.sseMessage("audit", { a: 1 }, 7)).toBe('id: 7\nevent: audit\ndata: {"a":1}\n\n');
    expect(lib.live.sseMessage("hello", {})).toBe("event: hello\ndata: {}\n\n");
  });
});
