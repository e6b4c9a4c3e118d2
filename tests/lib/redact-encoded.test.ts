import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import { describe, expect, it } from "vitest";
import { markerKinds, redactText, registerSecret } from "@/lib/redact";

/**
 * Secrets written in an encoding are masked as a class: hex with separators, hex dump tables and
 * base64 broken over lines are decoded, and masked only where the decoded bytes hold a secret
 * (this server's own, or a credential format). The encodings come from the real tools (xxd,
 * hexdump, od, base64, python). Ordinary hex and base64 stay readable.
 */

const serverSecret = `ar_agent_${crypto.randomBytes(18).toString("base64url")}`;
registerSecret(serverSecret);
const awsKey = "AKIAIOSFODNN7EXAMPLE";
const pem = `-----BEGIN OPENSSH PRIVATE KEY-----\n${crypto.randomBytes(120).toString("base64").replace(/(.{70})/g, "$1\n")}\n-----END OPENSSH PRIVATE KEY-----\n`;

/** Pipes `input` through a shell command (the real tool), returning its output. */
function through(command: string, input: string): string {
  return execFileSync("sh", ["-c", command], { input, encoding: "utf8" });
}

/** Text around the secret, so it starts at every alignment of the encodings. */
const around = (secret: string, pad: number) => `${"x".repeat(pad)}HOME=/home/agent\nTOKEN_IN_ENV=${secret}\nPATH=/usr/bin:/bin\n`;

const encodings: Array<[string, string]> = [
  ["xxd -p (wrapped at 60 columns)", "xxd -p"],
  ["xxd (a dump table)", "xxd"],
  ["xxd -g1 -c 8 (narrow table)", "xxd -g1 -c 8"],
  ["hexdump -C", "hexdump -C"],
  ["xxd -u (upper case)", "xxd -u"],
  ["xxd -i (a C array)", "xxd -i"],
  ["\\x escapes", "xxd -p | tr -d '\\n' | sed 's/\\(..\\)/\\\\x\\1/g'"],
  ["od -A x -t x1z", "od -A x -t x1z"],
  ["od -An -t x1 (spaced pairs over lines)", "od -An -t x1"],
  ["python bytes.hex(' ')", `python3 -c "import sys; print(sys.stdin.buffer.read().hex(' '))"`],
  ["python bytes.hex(':')", `python3 -c "import sys; print(sys.stdin.buffer.read().hex(':'))"`],
  ["base64 (wrapped at 76 columns)", "base64"],
  ["base64 -w 20", "base64 -w 20"],
  ["base64 -w 0 | fold -w 33", "base64 -w 0 | fold -w 33"],
  ["base64url wrapped (basenc)", "basenc --base64url -w 40"],
  ["indented wrapped base64 (a YAML block)", "base64 -w 30 | sed 's/^/    /'"],
];

describe("the server's own secret, encoded", () => {
  it.each(encodings)("%s, at every alignment", (_name, command) => {
    for (let pad = 0; pad < 3; pad++) {
      const out = through(command, around(serverSecret, pad));
      const masked = redactText(out);
      expect(masked, `${command} pad ${pad}`).toMatch(/\[REDACTED:server_secret:\d+\]/);
      // Nothing that still decodes to the secret, nor a long piece of it, is left.
      const hexLeft = masked.replace(/[^0-9a-f]/gi, "");
      expect(Buffer.from(hexLeft.length % 2 ? hexLeft.slice(1) : hexLeft, "hex").toString("latin1")).not.toContain(serverSecret.slice(9, 25));
      expect(masked).not.toContain(serverSecret.slice(9, 25));
      const b64 = masked.replace(/\[REDACTED:[a-z_]+:\d+\]/g, "").replace(/[^A-Za-z0-9+/_-]/g, "");
      for (let skip = 0; skip < 4; skip++) expect(Buffer.from(b64.slice(skip), "base64").toString("latin1")).not.toContain(serverSecret.slice(9, 25));
      expect(redactText(masked)).toBe(masked); // idempotent
    }
  });
});

describe("credential formats, encoded", () => {
  it.each(encodings)("an AWS key and a password assignment: %s", (_name, command) => {
    const out = through(command, `# config\nAWS_ACCESS_KEY_ID=${awsKey}\nDB_PASSWORD=correct-horse-battery\nLOG_LEVEL=debug\n`);
    const kinds = markerKinds(redactText(out));
    expect(kinds.aws_access_key ?? 0, command).toBeGreaterThan(0);
    expect(Object.keys(kinds).join()).toMatch(/secret_assignment|aws_access_key/);
  });

  it.each([["xxd"], ["base64"], ["hexdump -C"]])("a private key: %s", (command) => {
    const masked = redactText(through(command, pem));
    expect(markerKinds(masked).private_key ?? 0).toBeGreaterThan(0);
  });
});

describe("ordinary hex and base64 stay readable", () => {
  const random = crypto.randomBytes(600);
  const readme = "# Project\n\nThis project builds a small web service. Run npm install, then npm test.\n".repeat(8);
  it.each([
    ["sha256 sums", () => through("sha256sum", readme)],
    ["git-style commit ids", () => Array.from({ length: 20 }, () => `${crypto.randomBytes(20).toString("hex")} commit message`).join("\n")],
    ["xxd of random bytes", () => execFileSync("xxd", [], { input: random, encoding: "utf8" })],
    ["hexdump -C of a README", () => through("hexdump -C", readme)],
    ["spaced hex of random bytes", () => random.toString("hex").replace(/(..)/g, "$1 ")],
    ["base64 of random bytes, wrapped", () => random.toString("base64").replace(/(.{76})/g, "$1\n")],
    ["base64 of a README, wrapped", () => through("base64", readme)],
    ["a UUID list and long identifiers", () => Array.from({ length: 10 }, () => `${crypto.randomUUID()} AgentReachSandboxStatusProbeResult someVeryLongCamelCaseIdentifierName`).join("\n")],
  ])("%s", (_name, make) => {
    const text = make();
    expect(redactText(text)).toBe(text);
  });

  it("an encoded secret in a long dump masks only its own rows", () => {
    const blob = Buffer.concat([crypto.randomBytes(256), Buffer.from(`TOKEN=${serverSecret}\n`), crypto.randomBytes(256)]);
    const dump = execFileSync("xxd", [], { input: blob, encoding: "utf8" });
    const masked = redactText(dump);
    const rows = dump.trimEnd().split("\n").length;
    const maskedRows = masked.split("\n").filter((l) => l.includes("[REDACTED:server_secret")).length;
    expect(maskedRows).toBeGreaterThan(0);
    expect(maskedRows).toBeLessThanOrEqual(5);
    expect(masked.split("\n").length).toBe(dump.split("\n").length);
    expect(rows).toBeGreaterThan(30);
  });
});

describe("no stall", () => {
  // Runs built to make a backtracking pattern quadratic (the size of a capped output); a
  // quadratic one would take minutes and fail by the test timeout. Idempotent on each.
  it.each([
    ["spaced pairs ending in a letter", "ab ".repeat(60_000) + "g"],
    ["contiguous hex ending in a letter", "ab".repeat(100_000) + "g"],
    ["one huge base64 word", "Ab0".repeat(60_000) + "!"],
    ["a huge wrapped base64 block", "Abcdefghijklmno1\n".repeat(12_000)],
    ["a dump row that never ends", "00000000: " + "6162 ".repeat(40_000)],
    ["dump rows with separators only", "00000000:  \n".repeat(20_000)],
  ])("%s", (_name, text) => {
    const once = redactText(text);
    expect(redactText(once)).toBe(once);
  });
});
