import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { TestServer } from "@/tests/helpers/server";

/**
 * One way to call a tool through either agent door of a running server, so a harness can throw
 * the same calls at HTTP and MCP and compare what comes back.
 */

/** What a door answered: an HTTP-like status (MCP: 200 for a result, 500 for a JSON-RPC error) and the envelope. */
export interface DoorAnswer {
  door: "http" | "mcp";
  status: number;
  /** The envelope `{ok, call_id, data | error}`, or null when the door answered no envelope. */
  body: any;
  /** Transport or protocol error text, when the call did not produce an envelope. */
  failure?: string;
}

export interface Door {
  name: "http" | "mcp";
  call(tool: string, args: unknown): Promise<DoorAnswer>;
  close(): Promise<void>;
}

/** The HTTP door: POST /api/tools/{tool} with the agent token (no approval wait). */
export function httpDoor(server: TestServer): Door {
  return {
    name: "http",
    async call(tool, args) {
      const res = await fetch(`${server.url}/api/tools/${encodeURIComponent(tool)}`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.agentToken}`, "content-type": "application/json", prefer: "wait=0" },
        body: JSON.stringify(args),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      try {
        return { door: "http", status: res.status, body: JSON.parse(text) };
      } catch {
        return { door: "http", status: res.status, body: null, failure: text.slice(0, 300) };
      }
    },
    async close() {},
  };
}

/** The MCP door with the official SDK client over Streamable HTTP (/api/mcp, bearer token). */
export async function mcpDoor(server: TestServer): Promise<Door> {
  const client = new Client({ name: "agent-reach-reliability", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${server.agentToken}` } },
    }),
  );
  return {
    name: "mcp",
    async call(tool, args) {
      try {
        const result = (await client.callTool({ name: tool, arguments: args as Record<string, unknown> }, undefined, { timeout: 60_000 })) as CallToolResult;
        // lib/mcp/tool-mapping.ts: an error result holds the envelope, a success holds `data`.
        const first = result.content[0] as { type: string; text?: string } | undefined;
        const parsed = first?.type === "text" ? JSON.parse(first.text!) : null;
        const body = result.isError ? parsed : { ok: true, call_id: result._meta?.["agent-reach/call_id"] ?? null, data: parsed };
        return { door: "mcp", status: 200, body };
      } catch (err) {
        // A JSON-RPC error (or a transport failure) instead of a tool result.
        const code = (err as { code?: number }).code;
        return { door: "mcp", status: code === -32602 ? 400 : 500, body: null, failure: (err as Error).message.slice(0, 300) };
      }
    },
    close: () => client.close(),
  };
}
