import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CommandCgroup, parseMountinfo, parseProcCgroup, probeCgroups, type CgroupSupport } from "@/lib/exec/cgroup";

/** Finding, creating, reading and removing command cgroups (lib/exec/cgroup.ts). */

describe("parsing /proc", () => {
  it.each([
    [
      "cgroup v1 and the v2 unified mount of a hybrid system",
      "35 24 0:30 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n36 24 0:31 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n37 24 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n22 1 8:1 / / rw - ext4 /dev/sda1 rw",
      [
        { root: "/", mountPoint: "/sys/fs/cgroup/unified", fsType: "cgroup2", superOptions: ["rw"] },
        { root: "/", mountPoint: "/sys/fs/cgroup/pids", fsType: "cgroup", superOptions: ["rw", "pids"] },
        { root: "/", mountPoint: "/sys/fs/cgroup/memory", fsType: "cgroup", superOptions: ["rw", "memory"] },
      ],
    ],
    [
      "a pure v2 system with optional fields and an escaped mount point",
      "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n31 23 0:27 /sub /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw",
      [
        { root: "/", mountPoint: "/sys/fs/cgroup", fsType: "cgroup2", superOptions: ["rw", "nsdelegate"] },
        { root: "/sub", mountPoint: "/mnt/my cgroups", fsType: "cgroup2", superOptions: ["rw"] },
      ],
    ],
  ])("mountinfo: %s", (_name, text, expected) => {
    expect(parseMountinfo(text)).toEqual(expected);
  });

  it.each([
    ["v2", "0::/user.slice/session-1.scope\n", [{ controllers: [], path: "/user.slice/session-1.scope" }]],
    [
      "v1 with named and combined hierarchies",
      "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/x\n0::/\n",
      [
        { controllers: ["name=systemd"], path: "/" },
        { controllers: ["pids"], path: "/" },
        { controllers: ["memory"], path: "/process_api/abc" },
        { controllers: ["cpu", "cpuacct"], path: "/x" },
        { controllers: [], path: "/" },
      ],
    ],
    ["a path with a colon", "0::/a:b\n", [{ controllers: [], path: "/a:b" }]],
  ])("/proc/self/cgroup: %s", (_name, text, expected) => {
    expect(parseProcCgroup(text)).toEqual(expected);
  });
});

describe("probing", () => {
  let fakeProc: string | null = null;
  afterEach(() => {
    if (fakeProc) fs.rmSync(fakeProc, { recursive: true, force: true });
    fakeProc = null;
  });

  function fake(mountinfo: string, cgroup: string): string {
    fakeProc = fs.mkdtempSync(path.join(os.tmpdir(), "ar-proc-"));
    fs.mkdirSync(path.join(fakeProc, "self"));
    fs.writeFileSync(path.join(fakeProc, "self/mountinfo"), mountinfo);
    fs.writeFileSync(path.join(fakeProc, "self/cgroup"), cgroup);
    return fakeProc;
  }

  it("says why when no hierarchy has the controllers", () => {
    const support = probeCgroups(fake("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n", "0::/\n"));
    expect(support.pids).toBeNull();
    expect(support.memory).toBeNull();
    expect(support.problems).toEqual(["pids: no cgroup hierarchy has this controller", "memory: no cgroup hierarchy has this controller"]);
  });

  it("says why when a hierarchy cannot be written", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ar-cg-"));
    fs.writeFileSync(path.join(dir, `agent-reach-${process.pid}`), "a file where the directory would go");
    try {
      const support = probeCgroups(fake(`40 1 0:40 / ${dir} rw - cgroup cgroup rw,pids\n`, "5:pids:/\n"));
      expect(support.pids).toBeNull();
      expect(support.problems[0]).toBe(`pids: ${dir} (cgroup v1) is not usable: ${support.problems[0].split("is not usable: ")[1]}`);
      expect(support.problems[0]).toMatch(/is not usable: (ENOTDIR|EEXIST) /);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says why it cannot read /proc", () => {
    const support = probeCgroups(path.join(os.tmpdir(), "no-such-proc-dir"));
    expect(support).toMatchObject({ pids: null, memory: null });
    expect(support.problems[0]).toMatch(/^cgroups unavailable: ENOENT/);
  });
});

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** The real cgroups of this machine: these tests fail (never skip) where they are not usable. */
describe("command cgroups on this machine", () => {
  function realSupport(): CgroupSupport {
    const support = probeCgroups();
    if (!support.pids || !support.memory) throw new Error(`cgroups are not usable here: ${support.problems.join("; ")}`);
    return support;
  }
  const dirsOf = (group: CommandCgroup) => group.procsFiles.map(path.dirname);

  it("creates a directory per hierarchy with the limits written", async () => {
    const support = realSupport();
    const group = CommandCgroup.create(support, { memoryBytes: 48 << 20, processes: 20 })!;
    try {
      for (const dir of dirsOf(group)) {
        expect(fs.existsSync(dir)).toBe(true);
        expect(path.basename(dir)).toMatch(/^cmd-\d+$/);
        expect(path.basename(path.dirname(dir))).toBe(`agent-reach-${process.pid}`);
      }
      const files = dirsOf(group).flatMap((d) => fs.readdirSync(d).map((f) => path.join(d, f)));
      const read = (name: string) => fs.readFileSync(files.find((f) => path.basename(f) === name)!, "utf8").trim();
      expect(read("pids.max")).toBe("20");
      expect(read(support.memory!.version === 2 ? "memory.max" : "memory.limit_in_bytes")).toBe(String(48 << 20));
      expect(group.events()).toEqual({ pidsRefused: 0, oomKills: 0 });
    } finally {
      await group.remove();
    }
    for (const dir of dirsOf(group)) expect(fs.existsSync(dir)).toBe(false);
  });

  it("null limits mean no limit", async () => {
    const group = CommandCgroup.create(realSupport(), { memoryBytes: null, processes: null })!;
    try {
      const pidsMax = group.procsFiles.map((f) => path.join(path.dirname(f), "pids.max")).find((f) => fs.existsSync(f))!;
      expect(fs.readFileSync(pidsMax, "utf8").trim()).toBe("max");
    } finally {
      await group.remove();
    }
  });

  it("counts refused forks, kills every member and removes itself", async () => {
    const group = CommandCgroup.create(realSupport(), { memoryBytes: 64 << 20, processes: 6 })!;
    const files = group.procsFiles.map((f) => JSON.stringify(f)).join(" ");
    const child = spawn("/bin/bash", ["-c", `for f in ${files}; do echo $$ > "$f"; done; for i in 1 2 3 4 5 6 7 8; do sleep 60 & done; wait`], { stdio: "ignore", detached: true });
    try {
      for (let i = 0; i < 200 && group.events().pidsRefused === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(group.events().pidsRefused).toBeGreaterThan(0);
      expect(group.isPopulated()).toBe(true);
      group.signal("SIGKILL");
      for (let i = 0; i < 200 && group.isPopulated(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(group.isPopulated()).toBe(false);
    } finally {
      await group.remove();
    }
    for (const f of group.procsFiles) expect(fs.existsSync(path.dirname(f))).toBe(false);
    expect(child.exitCode !== null || child.signalCode !== null || !child.pid || !processExists(child.pid)).toBe(true);
  });

  it("a new probe removes the directories of a gateway that is gone, and keeps its own", async () => {
    const support = realSupport();
    const dead = spawnSync("/bin/true").pid!;
    const stale = [support.pids!.parent, support.memory!.parent].map((p) => path.join(path.dirname(p), `agent-reach-${dead}`));
    for (const dir of stale) fs.mkdirSync(path.join(dir, "cmd-1"), { recursive: true });
    const mine = CommandCgroup.create(support, { memoryBytes: null, processes: null })!;
    try {
      probeCgroups();
      for (const dir of stale) expect(fs.existsSync(dir)).toBe(false);
      for (const f of mine.procsFiles) expect(fs.existsSync(path.dirname(f))).toBe(true);
    } finally {
      for (const dir of stale) if (fs.existsSync(dir)) fs.rmSync(dir, { recursive: true });
      await mine.remove();
    }
  });

  it("releaseCgroups removes this gateway's directories, with a command's still in them (at exit)", () => {
    const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ar-release-")), "release.mts");
    fs.writeFileSync(
      script,
      `import fs from "node:fs";\nimport { CommandCgroup, probeCgroups, releaseCgroups } from ${JSON.stringify(path.resolve("lib/exec/cgroup.ts"))};\n` +
        "const s = probeCgroups();\nconst running = CommandCgroup.create(s, { memoryBytes: null, processes: null });\n" +
        "const before = running.procsFiles.every((f) => fs.existsSync(f));\nreleaseCgroups(s);\n" +
        "console.log(JSON.stringify({ before, parents: [s.pids?.parent, s.memory?.parent] }));\n",
    );
    try {
      const res = spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), script], { encoding: "utf8" });
      expect(res.status, res.stderr).toBe(0);
      const { before, parents } = JSON.parse(res.stdout) as { before: boolean; parents: string[] };
      expect(before).toBe(true);
      expect(parents.every(Boolean)).toBe(true);
      for (const dir of parents) expect(fs.existsSync(dir)).toBe(false);
    } finally {
      fs.rmSync(path.dirname(script), { recursive: true, force: true });
    }
  });


});
