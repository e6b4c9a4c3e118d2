import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { errorBody } from "@/lib/errors";
import { failure } from "@/lib/result";
import { envelopeResponse } from "@/lib/http/respond";

/**
 * The bridge between Node's HTTP server and the doors' Fetch-standard handlers
 * (`(req: Request) => Promise<Response>`), for the agent doors the server entry serves without
 * Next.js (scripts/serve.ts). It does what Next.js does for a route handler and no more: build a
 * `Request` from the incoming message, stream the `Response` back, and abort the request's signal
 * when the client goes away before the answer is sent (a waiting agent that hangs up stops
 * waiting).
 */

/**
 * A Fetch `Request` for a Node request. The URL is built from `serverHost` (the address the
 * server listens on) and the request target; the Host header is passed on as sent, for the
 * door's own check. The body is read first, up to `maxBodyBytes + 1` bytes (a longer one is cut there, so the
 * door still sees it is too large and refuses it; Node discards the rest): a buffered body costs
 * far less than a Node-to-Web stream for the small JSON bodies agents send.
 * @param signal aborted when the client disconnects (see `serveWeb`).
 */
export async function webRequestFrom(req: IncomingMessage, signal: AbortSignal, serverHost: string, maxBodyBytes: number): Promise<Request> {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    try {
      headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    } catch {
      // A header value Fetch refuses (a control character): Node's parser let it through; drop it.
    }
  }
  // The URL names the server itself: the Host header (checked by the door) stays in `headers`,
  // and a hostile one (`evil@127.0.0.1`, which Fetch refuses in a URL) cannot break the request.
  const target = req.url ?? "/";
  const url = `http://${serverHost}${target.startsWith("/") ? target : "/"}`;
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const body = hasBody ? new Uint8Array(await readBody(req, maxBodyBytes + 1)) : undefined;
  return new Request(url, { method: req.method, headers, signal, ...(body && { body }) });
}

/**
 * The request's body, at most `cap` bytes. Past the cap the rest is read and dropped, so the
 * connection stays usable for the client's next request (destroying the stream instead would
 * reset a kept-alive connection under the answer). @throws when the client aborts the upload.
 */
function readBody(req: IncomingMessage, cap: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
      if (err) return reject(err);
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      resolve(body.length > cap ? body.subarray(0, cap) : body);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= cap) {
        settle();
        req.resume(); // still flowing without a listener: the rest is dropped
      }
    };
    const onEnd = () => settle();
    const onError = (err: Error) => settle(err);
    const onClose = () => settle(req.complete ? undefined : new Error("the client closed the request before its body ended"));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

/**
 * Writes a Fetch `Response` to a Node response: status, headers (each `Set-Cookie` on its own
 * line) and the body, streamed chunk by chunk with back-pressure (a streamed MCP answer or a long
 * wait is sent as it is produced). Stops reading the body when the client has gone.
 */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    if (key !== "set-cookie") headers[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  if (!response.body) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  // A JSON answer is complete when the handler returns: send it in one write with its length.
  if (response.headers.get("content-type")?.startsWith("application/json")) {
    const body = Buffer.from(await response.arrayBuffer());
    headers["content-length"] = String(body.length);
    res.writeHead(response.status, headers);
    res.end(body);
    return;
  }
  res.writeHead(response.status, headers);
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) {
        await reader.cancel();
        return;
      }
      if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve));
    }
    res.end();
  } catch {
    // The producer failed mid-stream or the client went away: end the connection rather than hang.
    res.destroy();
  }
}

/**
 * Serves one Node request with a Fetch handler: builds the request (its signal aborts when the
 * client disconnects first; the body is read up to `maxBodyBytes + 1`), runs the handler, writes
 * the response. A handler that throws gets a
 * 500 `internal` envelope (the doors' own guard answers their failures before this).
 */
export async function serveWeb(
  req: IncomingMessage,
  res: ServerResponse,
  handler: (req: Request) => Promise<Response>,
  options: { serverHost: string; maxBodyBytes: number },
): Promise<void> {
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  let response: Response;
  try {
    response = await handler(await webRequestFrom(req, controller.signal, options.serverHost, options.maxBodyBytes));
  } catch (err) {
    console.error(`[agent-reach] ${req.method} ${req.url} failed:`, err);
    response = envelopeResponse(failure(null, errorBody("internal", "Internal error.")));
  }
  await sendWebResponse(res, response);
}
