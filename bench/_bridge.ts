import http from "node:http";
import { performance } from "node:perf_hooks";
import { serveWeb } from "@/lib/http/node-bridge";
const payload = JSON.stringify({ ok: true, call_id: "call_x", data: { text: "hello\n".repeat(50) } });
async function run(name: string, handler: http.RequestListener) {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as any).port;
  const body = JSON.stringify({ path: "small.txt" });
  const one = () => fetch(`http://127.0.0.1:${port}/api/tools/read_file`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer x" }, body }).then((r) => r.text());
  for (let i = 0; i < 300; i++) await one();
  const c0 = process.cpuUsage(); const t0 = performance.now();
  for (let i = 0; i < 3000; i++) await one();
  const c = process.cpuUsage(c0); const el = performance.now() - t0;
  console.log(`${name}: ${(el / 3000).toFixed(3)} ms/call wall, ${((c.user + c.system) / 1000 / 3000).toFixed(3)} ms CPU/call (client+server)`);
  server.close();
}
await run("plain node", (req, res) => { const chunks: Buffer[] = []; req.on("data", (c) => chunks.push(c)); req.on("end", () => { JSON.parse(Buffer.concat(chunks).toString()); res.writeHead(200, { "content-type": "application/json" }); res.end(payload); }); });
await run("bridge", (req, res) => void serveWeb(req, res, async (r) => { await r.json(); return new Response(payload, { headers: { "content-type": "application/json" } }); }, { fallbackHost: "127.0.0.1", maxBodyBytes: 1 << 20 }));
await run("plain node", (req, res) => { const chunks: Buffer[] = []; req.on("data", (c) => chunks.push(c)); req.on("end", () => { JSON.parse(Buffer.concat(chunks).toString()); res.writeHead(200, { "content-type": "application/json" }); res.end(payload); }); });
await run("bridge", (req, res) => void serveWeb(req, res, async (r) => { await r.json(); return new Response(payload, { headers: { "content-type": "application/json" } }); }, { fallbackHost: "127.0.0.1", maxBodyBytes: 1 << 20 }));
