import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BUILD_LOG } from "@/scripts/build-if-needed";
import { ensureBuilt, freePort } from "@/tests/helpers/server";

/**
 * `npm start` as a new user runs it (a real `npm start` of this repository with a prebuilt app):
 * the first start creates the workspace with a sample README.md that the quick start's examples
 * read; the build output carries no Turbopack tracing warnings; SIGTERM or SIGINT to the npm
 * process stops the whole tree and frees the port; malformed preset credentials refuse the start.
 */

const ROOT = path.resolve(__dirname, "../..");
const AGENT = "ar_agent_start_0123456789abcdefghijklmnopqrstuvwxyz";

/** Every descendant pid of `pid` (Linux /proc). */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z /.test(stat); // a zombie has ended
  } catch {
    return false;
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

interface Started {
  child: ChildProcess;
  dataDir: string;
  port: number;
  workspace: string;
  output: () => string;
}

async function npmStart(extraEnv: Record<string, string> = {}): Promise<Started> {
  const base = fs.realpathSync(os.tmpdir());
  const dataDir = fs.mkdtempSync(path.join(base, "ar-start-data-"));
  const workspace = path.join(fs.mkdtempSync(path.join(base, "ar-start-")), "workspace"); // not there yet
  const port = await freePort();
  const child = spawn("npm", ["start"], {
    cwd: ROOT,
    detached: true, // its own process group, so the test can clean up whatever is left
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("AGENT_REACH_") && k !== "DATABASE_URL")),
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: String(port),
      AGENT_REACH_WORKSPACE: workspace,
      AGENT_REACH_DATA_DIR: dataDir,
      AGENT_REACH_AGENT_TOKEN: AGENT,
      AGENT_REACH_REVIEWER_PASSWORD: "start-test-password",
      AGENT_REACH_HOST_ID: `start-${port}`,
      ...extraEnv,
    },
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  return { child, port, workspace, dataDir: extraEnv.AGENT_REACH_DATA_DIR ?? dataDir, output: () => output };
}

async function waitHealthy(s: Started): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (s.child.exitCode !== null) throw new Error(`npm start exited early:\n${s.output()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${s.port}/api/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200 && s.output().includes("Agent Reach is serving")) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`npm start did not become healthy:\n${s.output()}`);
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    /* gone */
  }
}

describe("npm start", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "serves the quick start's first calls, then stops the whole tree on %s to the npm process",
    async (signal) => {
      await ensureBuilt();
      const s = await npmStart();
      try {
        await waitHealthy(s);
        // The quick start: a new workspace has a sample README.md to list and read.
        const call = async (tool: string, args: unknown) => {
          const res = await fetch(`http://127.0.0.1:${s.port}/api/tools/${tool}`, { method: "POST", headers: { authorization: `Bearer ${AGENT}` }, body: JSON.stringify(args) });
          return { status: res.status, body: await res.json() };
        };
        const list = await call("list_directory", { path: "." });
        expect(list.status).toBe(200);
        expect(JSON.stringify(list.body.data)).toContain("README.md");
        const read = await call("read_file", { path: "README.md", limit: 20 });
        expect(read.status).toBe(200);
        expect(read.body.data.content).toContain("Agent Reach workspace");
        expect(s.output()).toContain("(created, with a sample README.md)");

        const tree = descendants(s.child.pid!);
        expect(tree.length).toBeGreaterThanOrEqual(2); // tsx → scripts/start.ts → next start
        const exited = new Promise<void>((resolve) => s.child.once("exit", () => resolve()));
        process.kill(s.child.pid!, signal);
        await Promise.race([exited, new Promise((_, reject) => setTimeout(() => reject(new Error(`npm did not exit after ${signal}:\n${s.output()}`)), 20_000))]);
        // The port closes and nothing of the tree keeps running.
        const deadline = Date.now() + 10_000;
        while (Date.now() < deadline && ((await portOpen(s.port)) || tree.some(alive))) await new Promise((r) => setTimeout(r, 100));
        expect(await portOpen(s.port)).toBe(false);
        expect(tree.filter(alive)).toEqual([]);
      } finally {
        killGroup(s.child);
      }
    },
    240_000,
  );

  it("a new user sees the build, then the banner: the build output has no Turbopack tracing warnings", async () => {
    await ensureBuilt();
    const log = fs.readFileSync(path.join(ROOT, BUILD_LOG), "utf8");
    expect(log).toMatch(/Compiled successfully|Compiled with warnings|Route \(app\)/);
    expect(log).not.toMatch(/whole project|dynamic filesystem|unexpected file in NFT|Encountered unexpected file/i);
    // A fresh clone builds without a cache; Next.js says so with a ⚠ line that is not a defect.
    const warnings = (log.match(/^\s*(⚠|Warning).*$/gm) ?? []).filter((line) => !/No build cache found/.test(line));
    expect(warnings).toEqual([]);
  }, 600_000);

  it("health says which check failed: a disk threshold set above the free space fails only `disk`", async () => {
    const s = await npmStart({ AGENT_REACH_HEALTH_MIN_FREE_PERCENT: "100" });
    try {
      const deadline = Date.now() + 180_000;
      while (!s.output().includes("Agent Reach is serving") && Date.now() < deadline) {
        if (s.child.exitCode !== null) throw new Error(`npm start exited early:\n${s.output()}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      const res = await fetch(`http://127.0.0.1:${s.port}/api/health`);
      const body = await res.json();
      expect(res.status).toBe(503);
      expect(body.failed).toEqual(["disk"]);
      const disk = body.checks.find((c: { name: string }) => c.name === "disk");
      expect(disk.detail).toMatch(/MiB free of \d+ MiB; below the \d+ MiB minimum \(AGENT_REACH_HEALTH_MIN_FREE_PERCENT=100\)/);
    } finally {
      killGroup(s.child);
    }
  }, 240_000);

  it("a second server on the same data directory refuses to start, naming the first, which keeps serving", async () => {
    await ensureBuilt();
    const first = await npmStart();
    try {
      await waitHealthy(first);
      const second = await npmStart({ AGENT_REACH_DATA_DIR: first.dataDir, AGENT_REACH_HOST_ID: `start-${first.port}` });
      try {
        const code = await new Promise<number | null>((resolve) => second.child.once("exit", (c) => resolve(c)));
        expect(code).not.toBe(0);
        expect(second.output()).toContain(`Another Agent Reach server (pid `);
        expect(second.output()).toContain(`http://127.0.0.1:${first.port}`);
        expect(await portOpen(second.port)).toBe(false);
        // Refused before anything was made: its workspace was not created.
        expect(fs.existsSync(second.workspace)).toBe(false);
        const health = await fetch(`http://127.0.0.1:${first.port}/api/health`);
        expect(health.status).toBe(200);
      } finally {
        killGroup(second.child);
      }
    } finally {
      killGroup(first.child);
    }
  }, 240_000);

  it("a port another program holds refuses the start in one line, before any credential or workspace is made", async () => {
    const holder = net.createServer((socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"));
    const port = await new Promise<number>((resolve) => holder.listen(0, "127.0.0.1", () => resolve((holder.address() as net.AddressInfo).port)));
    try {
      // No preset credentials: a start that went on would make and print new ones.
      const s = await npmStart({ PORT: String(port), AGENT_REACH_AGENT_TOKEN: "", AGENT_REACH_REVIEWER_PASSWORD: "" });
      try {
        const code = await new Promise<number | null>((resolve) => s.child.once("exit", (c) => resolve(c)));
        expect(code).not.toBe(0);
        expect(s.output()).toContain(`port ${port} on 127.0.0.1 is in use by another program`);
        expect(s.output()).not.toMatch(/Agent Reach is serving|shown once|at Server\.setupListenHandle/);
        expect(fs.existsSync(s.workspace)).toBe(false);
        expect(fs.existsSync(path.join(s.dataDir, "agent-reach.db"))).toBe(false);
      } finally {
        killGroup(s.child);
      }
    } finally {
      holder.close();
    }
  }, 60_000);

  it.each([
    ["AGENT_REACH_AGENT_TOKEN", "my-plain-agent-token-0123456789", /AGENT_REACH_AGENT_TOKEN is not an agent token: "ar_agent_"/],
    ["AGENT_REACH_REVIEWER_TOKEN", "rev-0123456789abcdefghijklmnop", /AGENT_REACH_REVIEWER_TOKEN is not a reviewer API token: "ar_rev_"/],
  ])("refuses to start with a preset %s without its prefix", async (key, value, message) => {
    const s = await npmStart({ [key]: value });
    try {
      const code = await new Promise<number | null>((resolve) => s.child.once("exit", (c) => resolve(c)));
      expect(code).not.toBe(0);
      expect(s.output()).toMatch(message);
      expect(s.output()).toContain("Refusing to start");
      expect(await portOpen(s.port)).toBe(false);
    } finally {
      killGroup(s.child);
    }
  }, 60_000);
});
