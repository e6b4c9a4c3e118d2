import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeEntities, htmlToText } from "@/lib/net/html-to-text";

const BASE = "https://docs.example.com/guide/start.html";

describe("htmlToText", () => {
  it.each([
    ["headings", "<h1>Title</h1><h3>Sub</h3><p>text</p>", "# Title\n\n### Sub\n\ntext"],
    ["paragraph whitespace", "<p>  many\n   spaces\tand\nlines </p><p>next</p>", "many spaces and lines\n\nnext"],
    ["inline markup", "<p>a <b>bold</b> and <em>em</em>phasis</p>", "a bold and emphasis"],
    ["line breaks", "<p>one<br>two<br/><br>three</p>", "one\ntwo\n\nthree"],
    ["unordered list", "<ul><li>a</li><li>b</li></ul>", "- a\n- b"],
    ["ordered list", "<ol><li>a<li>b</ol>", "1. a\n2. b"],
    ["nested list", "<ul><li>a<ul><li>a1</li></ul></li><li>b</li></ul>", "- a\n  - a1\n- b"],
    ["relative link", '<p>see <a href="../api/index.html#x">the API</a>.</p>', "see [the API](https://docs.example.com/api/index.html#x)."],
    ["link with entity in href", '<a href="/s?a=1&amp;b=2">q</a>', "[q](https://docs.example.com/s?a=1&b=2)"],
    ["fragment and javascript links keep text only", '<a href="#top">top</a> <a href="javascript:alert(1)">js</a>', "top js"],
    ["mailto link", '<a href="mailto:a@example.com">mail</a>', "[mail](mailto:a@example.com)"],
    ["empty link", '<a href="/x"><img src="i.png"></a>after', "after"],
    ["table", "<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>", "A | B\n1 | 2"],
    ["pre keeps whitespace", "<pre>  a\n    b &lt;c&gt;\n</pre>", "a\n    b <c>"],
    ["inline code", "<p>run <code>npm test</code></p>", "run `npm test`"],
    ["hr", "<p>a</p><hr><p>b</p>", "a\n\n---\n\nb"],
    ["script with markup inside", '<p>a</p><script>document.write("</p><p>evil")</script><p>b</p>', "a\n\nb"],
    ["style", "<style>p { color: red }</style><p>x</p>", "x"],
    ["comments", "<p>a<!-- <p>hidden</p> -->b</p>", "ab"],
    ["unterminated comment", "<p>a</p><!-- never closed <p>b</p>", "a"],
    ["svg and template", "<svg><text>no</text></svg><template><p>no</p></template><p>yes</p>", "yes"],
    ["nav removed", "<nav><a href='/'>Home</a></nav><main><p>content</p></main>", "content"],
    ["head without end tag", "<html><head><title>T</title><meta charset=utf-8><body><p>body</p>", "T\n\nbody"],
    ["title not repeated when the page starts with it", "<title>Guide</title><h1>Guide</h1><p>x</p>", "# Guide\n\nx"],
    ["stray less-than", "<p>a < b and 1<2</p>", "a < b and 1<2"],
    ["attribute with >", '<p title="a > b">text</p>', "text"],
    ["tag open at end of input", '<p>text <a href="x', "text"],
    ["textarea raw text", "<textarea><b>not bold</b></textarea>", "<b>not bold</b>"],
    ["uppercase tags", "<P>A</P><UL><LI>B</LI></UL>", "A\n\n- B"],
    ["empty", "", ""],
    ["named references beyond the common ones", "<p>&alpha; &Omega; &lArr; &spades;</p>", "α Ω ⇐ ♠"],
    ["fallback content of embeds and frames dropped", "<noembed><p>no</p></noembed><noframes>no</noframes><p>yes</p>", "yes"],
    ["script left open at the end of input", "<p>a</p><script>var x = '<p>b</p>';", "a"],
    ["plaintext makes the rest text", "<p>a</p><plaintext><b>b</b>", "a\n\n<b>b</b>"],
  ])("%s", (_name, html, expected) => {
    expect(htmlToText(html, BASE)).toBe(expected);
  });

  it("never throws and never returns markup-only noise for arbitrary input (property)", () => {
    const piece = fc.constantFrom("<p>", "</p>", "<a href='x'>", "</a>", "<script>", "</script>", "<!--", "-->", "<", ">", "&amp;", "&#x41;", "text", " ", "\n", "<li>", "<ul>", "<pre>", "</pre>", "'", '"');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), (parts) => {
        const text = htmlToText(parts.join(""), BASE);
        expect(typeof text).toBe("string");
        expect(text).toBe(text.trim());
        expect(text).not.toMatch(/\n{3,}/);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("htmlToText on hostile input", () => {
  // Each of these would take minutes with a reader whose work per tag grows with the nesting depth.
  it.each([
    ["200,000 nested elements", "<div>".repeat(200_000) + "deep" + "</div>".repeat(200_000), "deep"],
    ["200,000 unmatched end tags under deep nesting", "<span>".repeat(100_000) + "x" + "</p>".repeat(200_000), "x"],
    ["an attribute list of a megabyte", `<a href="/a" ${"x=1 ".repeat(250_000)}>link</a>`, "[link](https://docs.example.com/a)"],
    ["a megabyte of stray less-than signs", "<".repeat(1_000_000), "<".repeat(1_000_000)],
    ["50,000 nested lists with an item each (indentation stops growing at 10 levels)", "<ul>".repeat(50_000) + "<li>x".repeat(50_000), `${"  ".repeat(10)}- x\n`.repeat(50_000).trim()],
  ])("%s", (_name, html, expected) => {
    expect(htmlToText(html, BASE)).toBe(expected);
  });
});

describe("decodeEntities", () => {
  it.each([
    ["&amp;&lt;&gt;&quot;&apos;", "&<>\"'"],
    ["&copy; 2024 &mdash; &hellip;", "© 2024 — …"],
    ["&#65;&#x42;&#X43;", "ABC"],
    ["&#128512;", "😀"],
    ["&#0; &#xD800; &#x110000;", "\ufffd \ufffd \ufffd"],
    // The HTML standard decodes the legacy names (amp, lt, copy, …) even without their ";" in text;
    // an unknown name stays as written.
    ["&unknown; &amp", "&unknown; &"],
    ["&alpha;&rarr;&NotEqualTilde;", "α→≂̸"],
    ["no entities", "no entities"],
  ])("%s → %s", (input, expected) => {
    expect(decodeEntities(input)).toBe(expected);
  });
});
