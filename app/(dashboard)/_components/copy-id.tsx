"use client";

import Link from "next/link";
import { useState } from "react";

/**
 * An id shown whole (never shortened) in monospace, with a button that copies it to the
 * clipboard and says so. With `href`, the id is also a link.
 */
export function CopyId({ id, href, label = "Copy id" }: { id: string; href?: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(id);
    } catch {
      // Clipboard refused (insecure context): select the text so the reviewer can copy it.
      const range = document.createRange();
      const el = document.getElementById(`id-${id}`);
      if (el) {
        range.selectNodeContents(el);
        window.getSelection()?.removeAllRanges();
        window.getSelection()?.addRange(range);
      }
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  const text = (
    <code id={`id-${id}`} className="break-all font-mono text-[0.8rem]" data-testid="copy-id-value">
      {id}
    </code>
  );
  return (
    <span className="inline-flex max-w-full flex-wrap items-center gap-1.5">
      {href ? (
        <Link href={href} className="underline underline-offset-2">
          {text}
        </Link>
      ) : (
        text
      )}
      <button type="button" onClick={copy} className="ar-touch rounded border border-zinc-400 px-1.5 text-xs text-zinc-800 hover:bg-zinc-100 dark:border-zinc-600 dark:text-zinc-200 dark:hover:bg-zinc-800" aria-label={`${label} ${id}`}>
        {copied ? "copied" : "copy"}
      </button>
    </span>
  );
}
