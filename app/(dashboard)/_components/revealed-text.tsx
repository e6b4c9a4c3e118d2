import { revealParts } from "@/lib/dashboard/reveal";

/**
 * Text with every invisible, bidirectional and control character shown as a labelled marker
 * (lib/dashboard/reveal.ts), so what will run is what the reviewer reads. Works in server and
 * client components. The text wraps (`pre-wrap`, long words broken), so nothing is cut off.
 */
export function RevealedText({ text, className = "" }: { text: string; className?: string }) {
  return (
    <span className={`whitespace-pre-wrap break-all ${className}`}>
      {revealParts(text).map((part, i) =>
        part.kind === "text" ? (
          <span key={i}>{part.text}</span>
        ) : (
          <mark
            key={i}
            title={part.title}
            data-hidden-char={part.title}
            className="mx-px rounded bg-fuchsia-200 px-0.5 font-mono text-[0.7em] font-semibold text-fuchsia-900 dark:bg-fuchsia-800 dark:text-fuchsia-50"
          >
            {part.label}
          </mark>
        ),
      )}
    </span>
  );
}
