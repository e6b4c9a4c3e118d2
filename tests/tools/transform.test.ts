import fs from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { parse as parseCsv } from "csv-parse/sync";
import YAML from "yaml";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolError } from "@/lib/errors";
import { transformTool, TransformInput, type TransformOutput } from "@/lib/tools/transform";
import { locateJsonError } from "@/lib/transform/convert";
import { makeFixture, type Fixture } from "../helpers/fixture";
import { makeToolContext } from "../helpers/tool-context";

const FIXTURES = path.join(__dirname, "..", "fixtures", "transform");

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
});
afterEach(async () => {
  await fx.cleanup();
});

async function transform(args: Record<string, unknown>, configOverrides = {}): Promise<TransformOutput> {
  const ctx = makeToolContext(fx.ws, configOverrides);
  return (await transformTool.run(TransformInput.parse(args), ctx)) as TransformOutput;
}

async function transformError(args: Record<string, unknown>): Promise<ToolError> {
  try {
    await transform(args);
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("expected transform to fail");
}

/** Converts through every step of `formats` (big cap, so nothing is paged). */
async function chain(input: string, formats: string[], extra: Record<string, unknown> = {}): Promise<string> {
  let text = input;
  for (let i = 0; i + 1 < formats.length; i++) {
    const out = await transform({ input: text, from: formats[i], to: formats[i + 1], ...extra }, { readMaxChars: 1_000_000 });
    expect(out.truncated).toBe(false);
    text = out.output;
  }
  return text;
}

describe("transform conversions", () => {
  it.each([
    ["json → yaml", { input: '{"a":1,"b":[true,null,"x"]}', from: "json", to: "yaml" }, "a: 1\nb:\n  - true\n  - null\n  - x\n"],
    ["yaml → json", { input: "a: 1\nb: [x, 'y: z']\n", from: "yaml", to: "json" }, '{\n  "a": 1,\n  "b": [\n    "x",\n    "y: z"\n  ]\n}\n'],
    ["json → json compact", { input: '{ "a" : [ 1 , 2 ] }', from: "json", to: "json", indent: 0 }, '{"a":[1,2]}\n'],
    ["csv → json", { input: "name,age\nAda,36\n", from: "csv", to: "json", indent: 0 }, '[{"name":"Ada","age":"36"}]\n'],
    ["csv without header → json", { input: "a,b\n1,2\n", from: "csv", to: "json", csv_header: false, indent: 0 }, '[["a","b"],["1","2"]]\n'],
    ["tsv → json", { input: "a\tb\n1\t2\n", from: "csv", to: "json", delimiter: "\t", indent: 0 }, '[{"a":"1","b":"2"}]\n'],
    ["csv with BOM and CRLF", { input: "\ufeffa,b\r\n1,2\r\n\r\n", from: "csv", to: "jsonl" }, '{"a":"1","b":"2"}\n'],
    ["json → csv (union of keys, nested as JSON, null empty)", { input: '[{"a":1,"b":{"c":2}},{"a":null,"d":true}]', from: "json", to: "csv" }, 'a,b,d\n1,"{""c"":2}",\n,,true\n'],
    ["json array of arrays → csv", { input: '[["x","y"],[1,"a,b"]]', from: "json", to: "csv" }, 'x,y\n1,"a,b"\n'],
    ["single object → csv", { input: '{"a":"1"}', from: "json", to: "csv" }, "a\n1\n"],
    ["empty array → csv", { input: "[]", from: "json", to: "csv" }, ""],
    ["json → csv without header", { input: '[{"a":1,"b":2}]', from: "json", to: "csv", csv_header: false }, "1,2\n"],
    ["jsonl → json", { input: '{"a":1}\n\n{"a":2}\r\n', from: "jsonl", to: "json", indent: 0 }, '[{"a":1},{"a":2}]\n'],
    ["json → jsonl", { input: '[{"a":1},[2],"s"]', from: "json", to: "jsonl" }, '{"a":1}\n[2]\n"s"\n'],
    ["yaml multi-document → json array", { input: "---\na: 1\n---\nb: 2\n", from: "yaml", to: "json", indent: 0 }, '[{"a":1},{"b":2}]\n'],
    ["yaml merge keys", { input: "base: &b {x: 1}\nchild:\n  <<: *b\n  y: 2\n", from: "yaml", to: "json", indent: 0 }, '{"base":{"x":1},"child":{"x":1,"y":2}}\n'],
    ["yaml 1.2: on/yes stay strings", { input: "on: push\nyes: no\n", from: "yaml", to: "json", indent: 0 }, '{"on":"push","yes":"no"}\n'],
    ["empty yaml → null", { input: "", from: "yaml", to: "json" }, "null\n"],
    ["inline text starting with @ is written @@", { input: "@@handle,name\n@ada,Ada\n", from: "csv", to: "json", indent: 0 }, '[{"@handle":"@ada","name":"Ada"}]\n'],
  ])("%s", async (_name, args, expected) => {
    const out = await transform(args);
    expect(out.output).toBe(expected);
    expect(out.truncated).toBe(false);
    expect(out.original_length).toBe(expected.length);
    expect(out.next_offset).toBeNull();
  });

  it("counts records of list data", async () => {
    expect((await transform({ input: "a\n1\n2\n3\n", from: "csv", to: "json" })).records).toBe(3);
    expect((await transform({ input: '{"a":1}', from: "json", to: "yaml" })).records).toBeUndefined();
  });
});

describe("transform round trips on real-world files", () => {
  it("package.json → yaml → json keeps every value", async () => {
    const original = await fs.readFile(path.join(FIXTURES, "package.json"), "utf8");
    const back = await chain(original, ["json", "yaml", "json"]);
    expect(JSON.parse(back)).toEqual(JSON.parse(original));
    expect(back).toBe(`${JSON.stringify(JSON.parse(original), null, 2)}\n`);
  });

  it("a GitHub Actions workflow → json → yaml keeps the same data (keys like `on` stay strings)", async () => {
    const original = await fs.readFile(path.join(FIXTURES, "ci.yml"), "utf8");
    const json = await chain(original, ["yaml", "json"]);
    const data = JSON.parse(json);
    expect(Object.keys(data)).toContain("on");
    expect(data.jobs.test.steps[3].run).toBe("npm run lint\nnpm test -- --reporter=verbose\n");
    expect(data.jobs.release.steps[1].run).toBe("npm publish --access public --provenance");
    expect(data.concurrency.group).toBe("${{ github.workflow }}-${{ github.ref }}");
    const yaml = await chain(json, ["json", "yaml"]);
    expect(YAML.parse(yaml)).toEqual(YAML.parse(original));
  });

  it("a CSV with quoted commas, quotes and newlines → json → csv is byte-identical", async () => {
    const original = await fs.readFile(path.join(FIXTURES, "contacts.csv"), "utf8");
    const json = await chain(original, ["csv", "json"]);
    const rows = JSON.parse(json) as Array<Record<string, string>>;
    expect(rows).toHaveLength(5);
    expect(rows[0]).toMatchObject({ company: "Analytical Engines, Ltd.", notes: "Prefers email.\nCall only on Tuesdays." });
    expect(rows[1]).toMatchObject({ name: "O'Brien, Pat", company: "", notes: 'Said "ship it" in the meeting', score: "" });
    expect(rows[3].name).toBe("  Leading Spaces");
    expect(rows[4].name).toBe("李雷");
    expect(await chain(json, ["json", "csv"])).toBe(original);
    expect(await chain(original, ["csv", "yaml", "jsonl", "csv"])).toBe(original);
  });

  it("any JSON value survives json → yaml → json (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
        const text = JSON.stringify(value);
        const back = await chain(text, ["json", "yaml", "json"]);
        expect(JSON.stringify(JSON.parse(back))).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  it("any table of strings survives json → csv → json (property)", async () => {
    const cellText = fc.string({ unit: fc.constantFrom("a", "Z", " ", ",", '"', "\n", "\r\n", "é", "😀", "\t", ";"), maxLength: 8 });
    const table = fc
      .uniqueArray(fc.string({ unit: fc.constantFrom("a", "b", "c", " ", ",", '"'), minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 })
      .chain((cols) =>
        fc.array(fc.tuple(...cols.map(() => cellText)).map((cells) => Object.fromEntries(cols.map((c, i) => [c, cells[i]]))), {
          minLength: 1,
          maxLength: 5,
        }),
      );
    await fc.assert(
      fc.asyncProperty(table, async (rows) => {
        // A row of only empty cells is an empty line, which CSV readers skip: not a round trip.
        fc.pre(rows.every((r) => Object.values(r).some((v) => v !== "")));
        const text = JSON.stringify(rows);
        const back = await chain(text, ["json", "csv", "json"]);
        expect(JSON.parse(back)).toEqual(rows);
      }),
      { numRuns: 200 },
    );
  });
});

describe("transform errors", () => {
  it.each([
    ['{"a":}', 1, 6],
    ['{\n  "a": 1,\n  "b": [1, 2,]\n}', 3, 14],
    ['{"a": 1', 1, 8],
    ['{"a": 1}\n  x', 2, 3],
    ["", 1, 1],
    ['[1, "x\ny"]', 1, 7],
    ["{'a': 1}", 1, 2],
  ])("JSON %j fails at line %i, column %i", async (input, line, column) => {
    const err = await transformError({ input, from: "json", to: "yaml" });
    expect(err.errorName).toBe("transform_failed");
    expect(err.detail).toMatchObject({ format: "json", line, column });
    expect(err.message).toContain(`line ${line}, column ${column}`);
  });

  it("JSON Lines errors name the line of the record", async () => {
    const err = await transformError({ input: '{"a":1}\n{"a":2}\n{"a":3,,}\n', from: "jsonl", to: "json" });
    expect(err.detail).toMatchObject({ format: "json", line: 3, column: 8 });
  });

  it.each([
    ["a: 1\nb: [1, 2\nc: 3\n", 3, 1],
    ["a: 1\na: 2\n", 2, 1],
    ["a: b: c\n", 1, 4],
    ["list:\n  - a\n - b\n", 3, 1],
    ["\tkey: v\n", 1, 1],
    ['a: "unterminated\n', 2, 1],
  ])("YAML %j fails at line %i, column %i", async (input, line, column) => {
    const err = await transformError({ input, from: "yaml", to: "json" });
    expect(err.errorName).toBe("transform_failed");
    expect(err.detail).toMatchObject({ format: "yaml", line, column, code: expect.any(String) });
    expect(err.message).toMatch(new RegExp(`^Invalid YAML at line ${line}, column ${column}: \\S`));
  });

  it.each([
    ['a,b\nx,y\n1,"2\n3,4\n', { line: 3, code: "CSV_QUOTE_NOT_CLOSED" }],
    ['a,b\n"x\ny",1\n\n\n1,"2\n3,4\n', { line: 6, code: "CSV_QUOTE_NOT_CLOSED" }],
    ['a,b\n"x\ny",1\n1,"x"y\n', { line: 4, field: 2, code: "CSV_INVALID_CLOSING_QUOTE" }],
    ["a,b\n1,2\n3,4,5\n", { line: 3, code: "CSV_RECORD_INCONSISTENT_FIELDS_LENGTH" }],
    ['a,b\n1,"x"y\n', { line: 2, field: 2, code: "CSV_INVALID_CLOSING_QUOTE" }],
    ["id,name,id\n1,a,2\n", { line: 1, field: 3, code: "duplicate_column" }],
  ])("CSV %j fails with %j", async (input, detail) => {
    const err = await transformError({ input, from: "csv", to: "json" });
    expect(err.errorName).toBe("transform_failed");
    expect(err.detail).toMatchObject({ format: "csv", ...detail });
  });

  it.each([
    ["a: .inf\n", "yaml", "json", "not_representable"],
    ["a: [1, .nan]\n", "yaml", "csv", "not_representable"],
    ["a: !!binary aGVsbG8=\n", "yaml", "json", "not_representable"],
    ['"just a string"', "json", "csv", "not_tabular"],
    ['[{"a":1}, [1]]', "json", "csv", "not_tabular"],
    ['[1, 2]', "json", "csv", "not_tabular"],
  ])("%j (%s → %s) fails with %s", async (input, from, to, code) => {
    const err = await transformError({ input, from, to });
    expect(err.errorName).toBe("transform_failed");
    expect(err.detail.code).toBe(code);
  });

  it("refuses a YAML alias bomb", async () => {
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x]", ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(", ")}]`)].join("\n");
    const err = await transformError({ input: bomb, from: "yaml", to: "json" });
    expect(err.errorName).toBe("transform_failed");
    expect(err.detail.code).toBe("alias_limit");
  });

  it('refuses "-" (standard input) as invalid arguments over the API', () => {
    const parsed = TransformInput.safeParse({ input: "-", from: "json", to: "yaml" });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0].message).toMatch(/standard input/);
  });

  it.each([
    [{ input: "{}", from: "xml", to: "json" }],
    [{ input: "{}", from: "json", to: "json", delimiter: ";;" }],
    [{ input: "{}", from: "json", to: "json", unknown: 1 }],
    [{ input: "{}", from: "json", to: "json", max_chars: 10 }],
  ])("rejects %j", (args) => {
    expect(TransformInput.safeParse(args).success).toBe(false);
  });
});

describe("transform @file input", () => {
  it("reads a workspace file through the fence and records the path", async () => {
    await fx.put("data/contacts.csv", await fs.readFile(path.join(FIXTURES, "contacts.csv")));
    const ctx = makeToolContext(fx.ws);
    const out = (await transformTool.run(TransformInput.parse({ input: "@data/contacts.csv", from: "csv", to: "jsonl" }), ctx)) as TransformOutput;
    expect(out.records).toBe(5);
    expect(out.path).toBe("data/contacts.csv");
    expect(out.output.split("\n")).toHaveLength(6);
    expect(ctx.notes).toMatchObject({ pathRaw: "data/contacts.csv", pathResolved: fx.at("data/contacts.csv"), target: "data/contacts.csv" });
    expect(ctx.notes.summary).toBe("csv → jsonl (5 records) from data/contacts.csv");
  });

  it.each([
    ["@a/b.json", { paths: ["a/b.json"] }],
    ['{"a":1}', {}],
    ["@@literal", {}],
  ])("names the file of %j for the policy and the fence (subject)", async (input, expected) => {
    const args = TransformInput.parse({ input, from: "yaml", to: "json" });
    expect(await transformTool.subject(args, makeToolContext(fx.ws))).toEqual(expected);
  });

  it("decodes UTF-8 with BOM and UTF-16 files", async () => {
    await fx.put("bom.json", Buffer.from('\ufeff{"a":"é"}'));
    await fx.put("utf16.json", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"a":"✓"}', "utf16le")]));
    expect((await transform({ input: "@bom.json", from: "json", to: "yaml" })).output).toBe("a: é\n");
    expect((await transform({ input: "@utf16.json", from: "json", to: "yaml" })).output).toBe("a: ✓\n");
  });

  it.each([
    ["@../proj-out/secret.txt", "path_outside_workspace"],
    ["@/etc/passwd", "path_outside_workspace"],
    ["@missing.json", "not_found"],
    ["@sub", "is_directory"],
    ["@image.bin", "binary_file"],
    ["@latin1.csv", "encoding_unsupported"],
    ["@", "path_invalid"],
  ])("%s → %s", async (input, name) => {
    await fx.put("sub/x.json", "{}");
    await fx.put("image.bin", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]));
    await fx.put("latin1.csv", Buffer.from("name\ncafé\n", "latin1"));
    const err = await transformError({ input, from: "csv", to: "json" });
    expect(err.errorName).toBe(name);
  });

  it("refuses a symlink that leads out of the workspace", async () => {
    await fs.symlink(path.join(fx.root, "proj-out", "secret.txt"), fx.at("link.csv"));
    expect((await transformError({ input: "@link.csv", from: "csv", to: "json" })).errorName).toBe("path_outside_workspace");
  });

  it("refuses files larger than the request body limit", async () => {
    await fx.put("big.json", `[${"1,".repeat(1000)}1]`);
    const ctx = makeToolContext(fx.ws, { maxBodyBytes: 1024 });
    const err = await transformTool.run(TransformInput.parse({ input: "@big.json", from: "json", to: "csv" }), ctx).catch((e: unknown) => e);
    expect((err as ToolError).errorName).toBe("payload_too_large");
  });
});

describe("transform output cap", () => {
  it("pages long output at line ends; the pages add up to the whole output", async () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ id: i, name: `row ${i}`, text: "x".repeat(i % 17) }));
    const input = JSON.stringify(rows);
    const whole = (await transform({ input, from: "json", to: "csv" }, { readMaxChars: 1_000_000 })).output;
    let offset = 0;
    let joined = "";
    for (let page = 0; page < 100; page++) {
      const out = await transform({ input, from: "json", to: "csv", offset, max_chars: 500 });
      expect(out.output.length).toBeLessThanOrEqual(500);
      expect(out.original_length).toBe(whole.length);
      joined += out.output;
      if (out.next_offset === null) {
        expect(out.truncated).toBe(false);
        break;
      }
      expect(out.truncated).toBe(true);
      expect(out.output.endsWith("\n")).toBe(true);
      offset = out.next_offset;
    }
    expect(joined).toBe(whole);
  });

  it("never returns more than the server's cap", async () => {
    const out = await transform({ input: JSON.stringify(Array(500).fill("abcdef")), from: "json", to: "jsonl", max_chars: 5000 }, { readMaxChars: 300 });
    expect(out.output.length).toBeLessThanOrEqual(300);
    expect(out.truncated).toBe(true);
  });

  it("cuts a single long line without splitting a surrogate pair", async () => {
    const out = await transform({ input: JSON.stringify("😀".repeat(200)), from: "json", to: "json", max_chars: 101 });
    expect(out.output).toBe(`"${"😀".repeat(50)}`);
    expect(out.next_offset).toBe(101);
  });

  it("refuses an offset past the end", async () => {
    const err = await transformError({ input: "[]", from: "json", to: "json", offset: 10 });
    expect(err.errorName).toBe("offset_out_of_range");
  });
});

describe("locateJsonError", () => {
  it("finds nothing in valid JSON and agrees with JSON.parse on random input (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(locateJsonError(JSON.stringify(v, null, 1))).toBeNull();
      }),
      { numRuns: 500 },
    );
    const chars = fc.string({ unit: fc.constantFrom("{", "}", "[", "]", ",", ":", '"', "1", "-", "e", ".", " ", "t", "r", "u", "n", "l", "a", "\\") });
    fc.assert(
      fc.property(chars, (s) => {
        let valid = true;
        try {
          JSON.parse(s);
        } catch {
          valid = false;
        }
        expect(locateJsonError(s) === null).toBe(valid);
      }),
      { numRuns: 5000 },
    );
  });

  it("handles deep nesting without overflowing the stack", () => {
    expect(locateJsonError("[".repeat(200_000))).toBe(200_000);
    expect(locateJsonError(`${"[".repeat(50_000)}${"]".repeat(50_000)}`)).toBeNull();
  });

  it("parses CSV written by transform with csv-parse (sanity of quoting)", async () => {
    const out = await transform({ input: '[{"a":"x\\ny","b":"q\\"q"}]', from: "json", to: "csv" });
    expect(parseCsv(out.output, { columns: true })).toEqual([{ a: "x\ny", b: 'q"q' }]);
  });
});
