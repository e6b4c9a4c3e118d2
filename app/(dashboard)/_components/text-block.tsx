import { RevealedText } from "./revealed-text";

/**
 * A block of text or JSON shown in full: wrapped, hidden characters revealed, scrollable past a
 * tall height (the scrollbar shows there is more; nothing is cut).
 */
export function TextBlock({ text, label, tall = false }: { text: string; label?: string; tall?: boolean }) {
  return (
    <div className="min-w-0">
      {label && <div className="mb-1 text-xs font-medium text-zinc-500 dark:text-zinc-400">{label}</div>}
      <pre
        className={`overflow-auto rounded-md border border-zinc-200 bg-zinc-50 p-3 font-mono text-xs leading-relaxed dark:border-zinc-800 dark:bg-zinc-950 ${tall ? "max-h-[40rem]" : "max-h-96"}`}
      >
        <RevealedText text={text} />
      </pre>
    </div>
  );
}

/** Pretty-printed JSON of any value, with hidden characters revealed. */
export function JsonBlock({ value, label }: { value: unknown; label?: string }) {
  return <TextBlock label={label} text={value === undefined ? "" : JSON.stringify(value, null, 2)} />;
}
