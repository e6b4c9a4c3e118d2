/**
 * Reduces an HTML page to readable text for a model: headings as `#`, list items as `-`/`1.`,
 * links as `[text](absolute url)`, table cells separated by ` | `, `<pre>` kept verbatim;
 * scripts, styles, templates, SVG, navigation and comments removed; character references
 * decoded. A single linear pass (each character is looked at a bounded number of times), so a
 * hostile page cannot make it slow; malformed markup degrades to text, it never throws.
 *
 * No HTML parser is among the project's dependencies, so this is a small tokenizer of our own
 * that follows the HTML tokenizer's rules where they matter for text: raw-text elements
 * (script, style, title, textarea) end only at their own end tag, a tag left open at the end of
 * input is dropped, comments run to `-->`.
 */

/** Elements whose whole content is dropped. */
const SKIP = new Set(["head", "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "canvas", "select", "nav"]);
/** Elements whose content is raw text: it ends only at the matching end tag. */
const RAW_TEXT = new Set(["script", "style", "title", "textarea", "xmp"]);
/** Elements that start and end a paragraph-level block (blank line around). */
const BLOCK2 = new Set([
  "p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "figure", "form", "fieldset",
  "table", "ul", "ol", "dl", "pre", "address", "details", "summary", "h1", "h2", "h3", "h4", "h5", "h6",
]);
/** Elements that start and end a line. */
const BLOCK1 = new Set(["li", "tr", "dt", "dd", "figcaption", "caption", "legend"]);

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", ensp: " ", emsp: " ", thinsp: " ",
  copy: "©", reg: "®", trade: "™", hellip: "…", mdash: "—", ndash: "–", minus: "−", shy: "",
  lsquo: "‘", rsquo: "’", sbquo: "‚", ldquo: "“", rdquo: "”", bdquo: "„", laquo: "«", raquo: "»",
  bull: "•", middot: "·", times: "×", divide: "÷", deg: "°", plusmn: "±", para: "¶", sect: "§",
  euro: "€", pound: "£", yen: "¥", cent: "¢", larr: "←", rarr: "→", uarr: "↑", darr: "↓", harr: "↔",
  le: "≤", ge: "≥", ne: "≠", asymp: "≈", infin: "∞", check: "✓", zwj: "\u200d", zwnj: "\u200c",
  iexcl: "¡", iquest: "¿", acute: "´", micro: "µ", frac12: "½", frac14: "¼", frac34: "¾", sup2: "²", sup3: "³",
};

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
  let pos = 0;

  while (pos < html.length) {
    const lt = html.indexOf("<", pos);
    const textEnd = lt === -1 ? html.length : lt;
    if (textEnd > pos && skipDepth === 0) sink.text(decodeEntities(html.slice(pos, textEnd)), preDepth > 0);
    if (lt === -1) break;

    const tag = readTag(html, lt);
    if (tag === null) {
      // "<" that does not start a tag is text.
      if (skipDepth === 0) sink.text("<", preDepth > 0);
      pos = lt + 1;
      continue;
    }
    pos = tag.end;
    if (tag.kind !== "element") continue;
    const name = tag.name;

    if (!tag.closing && RAW_TEXT.has(name)) {
      const close = new RegExp(`</${name}[\\s/>]`, "ig");
      close.lastIndex = pos;
      const found = close.exec(html);
      const contentEnd = found ? found.index : html.length;
      const content = html.slice(pos, contentEnd);
      pos = found ? Math.max(contentEnd, (readTag(html, contentEnd)?.end ?? contentEnd + 1)) : html.length;
      if (name === "title" && title === "") title = decodeEntities(content).replace(/\s+/g, " ").trim();
      if (name === "textarea" && skipDepth === 0) sink.text(decodeEntities(content), true);
      continue;
    }
    if (skipDepth > 0) {
      // The head ends where the body starts, even without </head> (HTML tree construction).
      if (skipName === "head" && name === "body") skipDepth = 0;
      else if (name === skipName) skipDepth += tag.closing ? -1 : tag.selfClosing ? 0 : 1;
      continue;
    }
    if (!tag.closing && SKIP.has(name)) {
      if (!tag.selfClosing) {
        skipDepth = 1;
        skipName = name;
      }
      continue;
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
        const indent = "  ".repeat(Math.max(0, lists.length - 1));
        sink.text(`${indent}${list?.ordered ? `${++list.count}.` : "-"} `, true);
      }
    } else if ((name === "td" || name === "th") && !tag.closing) {
      if (cellInRow++ > 0) sink.text(" | ");
    } else if (name === "code" && preDepth === 0) {
      sink.text("`");
    } else if (name === "a") {
      if (!tag.closing && link === null) {
        link = { start: sink.mark, href: linkTarget(tag.attrs, baseUrl) };
      } else if (tag.closing && link !== null) {
        const href = link.href;
        if (href !== null) {
          sink.rewrite(link.start, (raw) => (raw.trim() === "" ? raw : `${/^\s*/.exec(raw)![0]}[${raw.trim()}](${href})`));
        }
        link = null;
      }
    }
  }

  const body = sink.toString().replace(/\n{3,}/g, "\n\n").trim();
  return title !== "" && !body.slice(0, title.length + 4).includes(title) ? `${title}\n\n${body}` : body;
}

type Tag =
  | { kind: "element"; name: string; closing: boolean; selfClosing: boolean; attrs: string; end: number }
  | { kind: "other"; end: number };

/**
 * Reads the markup starting at `html[lt] === "<"`: an element tag, a comment, a doctype or a
 * processing instruction. Returns null when the "<" does not start markup (it is text).
 * A tag or comment left open at the end of input runs to the end (HTML tokenizer, EOF rules).
 */
function readTag(html: string, lt: number): Tag | null {
  if (html.startsWith("<!--", lt)) {
    const close = html.indexOf("-->", lt + 4);
    return { kind: "other", end: close === -1 ? html.length : close + 3 };
  }
  if (html[lt + 1] === "!" || html[lt + 1] === "?") {
    const close = html.indexOf(">", lt + 2);
    return { kind: "other", end: close === -1 ? html.length : close + 1 };
  }
  const m = /^<(\/?)([A-Za-z][A-Za-z0-9:-]*)/.exec(html.slice(lt, lt + 64));
  if (!m) return null;
  let i = lt + m[0].length;
  let quote = "";
  for (; i < html.length; i++) {
    const c = html[i];
    if (quote !== "") {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") {
      // Quotes only open an attribute value right after "=" (possibly with spaces).
      if (/=\s*$/.test(html.slice(Math.max(lt, i - 8), i))) quote = c;
    } else if (c === ">") {
      break;
    }
  }
  const attrs = html.slice(lt + m[0].length, i);
  return {
    kind: "element",
    name: m[2].toLowerCase(),
    closing: m[1] === "/",
    selfClosing: attrs.trimEnd().endsWith("/"),
    attrs,
    end: Math.min(i + 1, html.length),
  };
}

/** The absolute http(s)/mailto target of an `<a>`'s href, or null. */
function linkTarget(attrs: string, baseUrl: string | undefined): string | null {
  const m = /(?:^|\s)href\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i.exec(attrs);
  if (!m) return null;
  const href = decodeEntities(m[1] ?? m[2] ?? m[3] ?? "").trim();
  if (href === "" || href.startsWith("#")) return null;
  if (!URL.canParse(href, baseUrl)) return null;
  const url = new URL(href, baseUrl);
  return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : null;
}

/**
 * Decodes character references: numeric (`&#169;`, `&#xA9;`) and the common named ones (which
 * need their `;`). Unknown names stay as written; invalid code points become U+FFFD.
 *
 * @param s text or an attribute value
 */
export function decodeEntities(s: string): string {
  if (!s.includes("&")) return s;
  return s.replace(/&(?:#(\d{1,8})|#[xX]([0-9a-fA-F]{1,7})|([A-Za-z][A-Za-z0-9]{1,31}));?/g, (whole, dec, hex, name) => {
    if (name !== undefined) return whole.endsWith(";") ? (NAMED_ENTITIES[name] ?? whole) : whole;
    const cp = dec !== undefined ? Number(dec) : parseInt(hex, 16);
    const valid = cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
    return valid ? String.fromCodePoint(cp) : "\ufffd";
  });
}
