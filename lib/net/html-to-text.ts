/**
 * Reduces an HTML page to readable text for a model: headings as `#`, list items as `-`/`1.`,
 * links as `[text](absolute url)`, table cells separated by ` | `, `<pre>` kept verbatim;
 * scripts, styles, templates, SVG, navigation and comments removed; character references
 * decoded.
 *
 * The markup is read by htmlparser2's tokenizer (the HTML tokenizer's states: raw-text elements
 * such as script and style end only at their own end tag, RCDATA in title and textarea, comments
 * to `-->`, a tag left open at the end of input dropped) with its entity decoder (the full
 * HTML named character reference table and the numeric rules). htmlparser2's `Parser` is not
 * used: its element stack costs time in proportion to the nesting depth at every tag, so a page
 * of deeply nested tags would take quadratic time. The tokenizer is a single linear pass and the
 * walk below keeps only counters and the list stack, so a hostile page cannot make it slow;
 * malformed markup degrades to text, it never throws.
 */
import { decodeHTML } from "entities";
import { Tokenizer } from "htmlparser2";

/** Elements whose whole content is dropped. */
const SKIP = new Set(["head", "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "canvas", "select", "nav"]);
/**
 * Elements the tokenizer reads as raw text or RCDATA (their content ends only at the matching
 * end tag). Only title (the page's name) and textarea (verbatim) keep theirs; `plaintext` makes
 * the rest of the input text, which is ordinary text here.
 */
const RAW_TEXT = new Set(["script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes"]);
/** Elements that start and end a paragraph-level block (blank line around). */
const BLOCK2 = new Set([
  "p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "figure", "form", "fieldset",
  "table", "ul", "ol", "dl", "pre", "address", "details", "summary", "h1", "h2", "h3", "h4", "h5", "h6",
]);
/**
 * Nesting levels of lists that are indented; deeper ones are indented like this level. Without
 * a cap, n nested lists with n items would write n² spaces.
 */
const MAX_LIST_INDENT = 10;
/** Elements that start and end a line. */
const BLOCK1 = new Set(["li", "tr", "dt", "dd", "figcaption", "caption", "legend"]);

interface ListState {
  ordered: boolean;
  count: number;
}

/**
 * Text output with pending line breaks, so blocks never produce runs of blank lines. Kept as a
 * list of pieces (never re-scanning what was written), so output is linear in the input.
 */
class TextSink {
  private parts: string[] = [];
  private pendingBreaks = 0;

  /** A position to `rewrite` from later. */
  get mark(): number {
    return this.parts.length;
  }

  /** Requests at least `n` newlines before the next text. */
  break(n: 1 | 2): void {
    this.trimTrailingSpaces();
    if (this.parts.length > 0) this.pendingBreaks = Math.max(this.pendingBreaks, n);
  }

  /** Appends text; `verbatim` keeps whitespace (inside `<pre>`). */
  text(s: string, verbatim = false): void {
    if (!verbatim) s = s.replace(/[\s\u00a0]+/g, " ");
    if (s.length === 0) return;
    if (this.pendingBreaks > 0) {
      if (!verbatim && s === " ") return;
      this.parts.push("\n".repeat(this.pendingBreaks));
      this.pendingBreaks = 0;
    }
    const last = this.lastChar();
    if (!verbatim && s[0] === " " && (last === "" || last === "\n" || last === " ")) s = s.slice(1);
    if (s.length > 0) this.parts.push(s);
  }

  /** A hard line break (`<br>`). */
  newline(): void {
    this.trimTrailingSpaces();
    this.parts.push("\n".repeat(Math.max(1, this.pendingBreaks)));
    this.pendingBreaks = 0;
  }

  /** Replaces everything written since `mark` with `fn(it)`. */
  rewrite(mark: number, fn: (written: string) => string): void {
    const written = this.parts.splice(mark).join("");
    this.parts.push(fn(written));
  }

  toString(): string {
    return this.parts.join("");
  }

  private lastChar(): string {
    const last = this.parts[this.parts.length - 1];
    return last === undefined ? "" : last[last.length - 1];
  }

  private trimTrailingSpaces(): void {
    while (this.parts.length > 0) {
      const trimmed = this.parts[this.parts.length - 1].replace(/[ \t]+$/, "");
      if (trimmed !== "") {
        this.parts[this.parts.length - 1] = trimmed;
        return;
      }
      this.parts.pop();
    }
  }
}

/**
 * Converts HTML to readable text.
 *
 * @param html the document (already decoded to a string)
 * @param baseUrl the page's URL, for making link targets absolute; links that do not resolve,
 *   fragments and non-http(s)/mailto links keep their text only
 * @returns text with "\n" line ends, no leading/trailing blank lines; the `<title>` is the first
 *   line when the body does not already start with it
 */
export function htmlToText(html: string, baseUrl?: string): string {
  const sink = new TextSink();
  const lists: ListState[] = [];
  let skipDepth = 0;
  let skipName = "";
  let preDepth = 0;
  let cellInRow = 0;
  let link: { start: number; href: string | null } | null = null;
  let title = "";
  /** The raw-text element whose content is being read, or "". */
  let raw = "";
  let rawText = "";

  const text = (run: string): void => {
    if (raw !== "") rawText += run;
    else if (skipDepth === 0) sink.text(run, preDepth > 0);
  };

  const element = (tag: Tag): void => {
    const name = tag.name;
    if (raw !== "") {
      // Inside a raw-text element the tokenizer reports only its own end tag.
      if (name === "title" && title === "") title = rawText.replace(/\s+/g, " ").trim();
      if (name === "textarea" && skipDepth === 0) sink.text(rawText, true);
      raw = "";
      rawText = "";
      return;
    }
    if (!tag.closing && RAW_TEXT.has(name)) {
      raw = name;
      return;
    }
    if (skipDepth > 0) {
      // The head ends where the body starts, even without </head> (HTML tree construction).
      if (skipName === "head" && name === "body") skipDepth = 0;
      else if (name === skipName) skipDepth += tag.closing ? -1 : tag.selfClosing ? 0 : 1;
      return;
    }
    if (!tag.closing && SKIP.has(name)) {
      if (!tag.selfClosing) {
        skipDepth = 1;
        skipName = name;
      }
      return;
    }

    if (name === "br") {
      sink.newline();
    } else if (name === "hr") {
      sink.break(2);
      sink.text("---");
      sink.break(2);
    } else if (BLOCK2.has(name) || BLOCK1.has(name)) {
      sink.break(BLOCK2.has(name) && !(lists.length > 0 && (name === "ul" || name === "ol")) ? 2 : 1);
      if (name === "pre") preDepth = Math.max(0, preDepth + (tag.closing ? -1 : 1));
      if (name === "ul" || name === "ol") {
        if (tag.closing) lists.pop();
        else lists.push({ ordered: name === "ol", count: 0 });
      }
      if (!tag.closing && name === "tr") cellInRow = 0;
      if (!tag.closing && /^h[1-6]$/.test(name)) sink.text(`${"#".repeat(Number(name[1]))} `);
      if (!tag.closing && name === "li") {
        const list = lists[lists.length - 1];
        const indent = "  ".repeat(Math.min(MAX_LIST_INDENT, Math.max(0, lists.length - 1)));
        sink.text(`${indent}${list?.ordered ? `${++list.count}.` : "-"} `, true);
      }
    } else if ((name === "td" || name === "th") && !tag.closing) {
      if (cellInRow++ > 0) sink.text(" | ");
    } else if (name === "code" && preDepth === 0) {
      sink.text("`");
    } else if (name === "a") {
      if (!tag.closing && link === null) {
        link = { start: sink.mark, href: linkTarget(tag.href, baseUrl) };
      } else if (tag.closing && link !== null) {
        const href = link.href;
        if (href !== null) {
          sink.rewrite(link.start, (written) => (written.trim() === "" ? written : `${/^\s*/.exec(written)![0]}[${written.trim()}](${href})`));
        }
        link = null;
      }
    }
  };

  readMarkup(html, { text, element });
  const body = sink.toString().replace(/\n{3,}/g, "\n\n").trim();
  return title !== "" && !body.slice(0, title.length + 4).includes(title) ? `${title}\n\n${body}` : body;
}

/** One start or end tag, as the walk needs it. */
interface Tag {
  /** Lower-case tag name. */
  name: string;
  closing: boolean;
  /** Written as `<x/>` (HTML ignores this except to end an element that has no content). */
  selfClosing: boolean;
  /** The decoded `href` attribute, or null. */
  href: string | null;
}

/**
 * Runs htmlparser2's tokenizer over `html` and reports text runs (character references decoded;
 * each run between two tags or comments reported once) and tags in document order.
 */
function readMarkup(html: string, on: { text(run: string): void; element(tag: Tag): void }): void {
  let run = "";
  let tag: Tag | null = null;
  let attrName = "";
  let attrValue = "";
  const flush = (): void => {
    if (run !== "") on.text(run);
    run = "";
  };
  const endTag = (selfClosing: boolean): void => {
    if (tag === null) return;
    flush();
    on.element({ ...tag, selfClosing });
    tag = null;
  };
  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      ontext: (start, end) => void (run += html.slice(start, end)),
      ontextentity: (cp) => void (run += String.fromCodePoint(cp)),
      onopentagname: (start, end) => void (tag = { name: html.slice(start, end).toLowerCase(), closing: false, selfClosing: false, href: null }),
      onattribname: (start, end) => {
        attrName = html.slice(start, end).toLowerCase();
        attrValue = "";
      },
      onattribdata: (start, end) => void (attrValue += html.slice(start, end)),
      onattribentity: (cp) => void (attrValue += String.fromCodePoint(cp)),
      onattribend: () => {
        if (tag !== null && attrName === "href" && tag.href === null) tag.href = attrValue;
      },
      onopentagend: () => endTag(false),
      onselfclosingtag: () => endTag(true),
      onclosetag: (start, end) => {
        flush();
        on.element({ name: html.slice(start, end).toLowerCase(), closing: true, selfClosing: false, href: null });
      },
      oncomment: flush,
      oncdata: flush,
      ondeclaration: flush,
      onprocessinginstruction: flush,
      onend: flush,
    },
  );
  tokenizer.write(html);
  tokenizer.end();
}

/** The absolute http(s)/mailto target of an `<a>`'s (decoded) href, or null. */
function linkTarget(rawHref: string | null, baseUrl: string | undefined): string | null {
  const href = rawHref?.trim() ?? "";
  if (href === "" || href.startsWith("#")) return null;
  if (!URL.canParse(href, baseUrl)) return null;
  const url = new URL(href, baseUrl);
  return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : null;
}

/**
 * Decodes character references the way the HTML standard does in text (the full named table,
 * numeric references, the legacy names that may omit their `;`); invalid code points become
 * U+FFFD.
 *
 * @param s text
 */
export function decodeEntities(s: string): string {
  return s.includes("&") ? decodeHTML(s) : s;
}
