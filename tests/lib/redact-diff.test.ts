import { describe, expect, it } from "vitest";
import { diffTexts } from "@/lib/diff/unified";
import { redactText, redactToolAnswer } from "@/lib/redact";
import { SAMPLES } from "@/tests/lib/redact-samples";

/**
 * Secrets inside a unified diff (what write_file, edit_file, restore_backup and change sets
 * answer with): every line of the file has a marker character in front, and each credential
 * format is masked there as it is in the file's own text (red team round 6, G8).
 */

const asDiff = (text: string, marker: string) => "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n" + text.split("\n").map((l) => marker + l).join("\n") + "\n";

describe("every credential format in a diff line", () => {
  const cases = SAMPLES.flatMap(([kind, text, secret]) => ["+", "-", " "].map((m) => [kind, m, text, secret] as const));
  it.each(cases)("%s behind %j", (_kind, marker, text, secret) => {
    const out = redactText(asDiff(text, marker));
    expect(out).not.toContain(secret);
    expect(out).toContain("[REDACTED:");
    // The diff's own structure stays: its headers and one marker per line.
    expect(out.startsWith("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n")).toBe(true);
    expect(redactText(out)).toBe(out);
  });

  it("a real diff made by the diff module, old and new lines holding secrets", () => {
    const before = SAMPLES.map(([, text]) => text).join("\n") + "\nplain\n";
    const { diff } = diffTexts("a/creds.txt", "b/creds.txt", before, "plain\nmongodb+srv://admin:s3cr3tpass@db.example.net/x\n");
    const out = redactText(diff);
    for (const [, , secret] of SAMPLES) expect(out).not.toContain(secret);
    expect(out).not.toContain("s3cr3tpass");
    expect(out).toContain(" plain");
  });
});

describe("diffs without secrets stay as they are", () => {
  const clean: string[] = [
    "+const token = getToken(req);\n-const token = req.headers.token;\n x = 1\n",
    "+password = form['password']\n-if (!password) return;\n",
    "+- uses: actions/checkout@v4\n+  with:\n+    token: ${{ secrets.GITHUB_TOKEN }}\n",
    "+sha256 3f786850e387550fdab836ed7e6dc881de23001b\n-commit 0123456789abcdef0123456789abcdef01234567\n",
    "+ see https://example.com/docs?page=2\n-ssh://git@github.com/org/repo.git\n",
  ];
  it.each(clean)("%j", (body) => {
    const diff = `--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n${body}`;
    expect(redactText(diff)).toBe(diff);
  });
});

describe("one redaction for every tool answer", () => {
  it("a write's answer: its diff masked, its other fields exact", () => {
    const answer = { path: "pw.txt", sha256: "a".repeat(64), backup_id: "bak_01abc", diff: asDiff("pw ar_pw_abcdefghijklmnopqrst\nglpat-abcdefghij0123456789", "-"), additions: 2 };
    const out = redactToolAnswer(answer, false);
    expect(out.diff).not.toContain("ar_pw_abcdefghijklmnopqrst");
    expect(out.diff).not.toContain("glpat-abcdefghij0123456789");
    expect({ ...out, diff: answer.diff }).toEqual(answer);
  });

  it("relaxed by a rule (redact: false): credential formats pass, the gateway's own secrets would not", () => {
    const answer = { diff: asDiff("glpat-abcdefghij0123456789", "+") };
    expect(redactToolAnswer(answer, true)).toEqual(answer);
  });
});
