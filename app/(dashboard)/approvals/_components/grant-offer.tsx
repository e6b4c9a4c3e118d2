"use client";

import { useEffect, useState } from "react";
import type { GrantOfferView } from "@/lib/dashboard/approvals";
import { INPUT } from "../../_components/page-parts";

/** The grant a reviewer chose to save with the approval (the approve API's `grant`). */
export interface GrantChoice {
  scope: "session" | "workspace";
  expires_in_s: number;
  patterns?: string[];
  path_glob?: string;
}

/**
 * "Don't ask again" beside the decision controls: off by default; when ticked, the reviewer sees
 * and may edit the pattern the approval will also allow (one command pattern per simple command,
 * or a path glob), and chooses its scope (this session or this workspace) and its expiry. The
 * sentence under it says exactly what will no longer ask. The server checks the grant again and
 * refuses one that reaches a sensitive path, a denied command or a built-in check.
 */
export function GrantOffer({ offer, onChange, disabled }: { offer: GrantOfferView; onChange(choice: GrantChoice | null): void; disabled: boolean }) {
  const [on, setOn] = useState(false);
  const [scope, setScope] = useState<"session" | "workspace">("session");
  const [expires, setExpires] = useState(offer.expiryChoices[0]?.seconds ?? 3600);
  const [patterns, setPatterns] = useState<Array<{ text: string; on: boolean }>>(offer.kind === "command" ? offer.suggestions.map((text) => ({ text, on: true })) : []);
  const [glob, setGlob] = useState(offer.kind === "path" ? (offer.suggestions[0] ?? "") : "");

  const chosen = offer.kind === "command" ? patterns.filter((p) => p.on && p.text.trim() !== "").map((p) => p.text.trim()) : glob.trim() ? [glob.trim()] : [];
  useEffect(() => {
    if (!on || chosen.length === 0) return onChange(null);
    onChange({ scope, expires_in_s: expires, ...(offer.kind === "command" ? { patterns: chosen } : { path_glob: chosen[0] }) });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [on, scope, expires, JSON.stringify(chosen)]);

  const label = offer.expiryChoices.find((c) => c.seconds === expires)?.label ?? `${expires} s`;
  return (
    <div className="mt-2 rounded-md border border-zinc-300 p-2 text-sm dark:border-zinc-700" data-testid="grant-offer">
      <label className="flex items-center gap-2 font-medium">
        <input type="checkbox" checked={on} onChange={(e) => setOn(e.target.checked)} disabled={disabled} data-testid="grant-toggle" />
        Don&apos;t ask again for this pattern
      </label>
      {on && (
        <div className="mt-2 space-y-2">
          {offer.kind === "command" ? (
            patterns.length === 0 ? (
              <p className="text-zinc-700 dark:text-zinc-300">No pattern can be suggested for this command (it is not statically known, or runs other programs).</p>
            ) : (
              patterns.map((p, i) => (
                <div key={i} className="flex items-center gap-2">
                  <input type="checkbox" aria-label={`Allow ${p.text}`} checked={p.on} onChange={(e) => setPatterns(patterns.map((q, j) => (j === i ? { ...q, on: e.target.checked } : q)))} />
                  <input
                    className={`${INPUT} font-mono`}
                    value={p.text}
                    aria-label="Command pattern"
                    data-testid="grant-pattern"
                    onChange={(e) => setPatterns(patterns.map((q, j) => (j === i ? { ...q, text: e.target.value } : q)))}
                  />
                </div>
              ))
            )
          ) : (
            <div className="flex flex-col gap-1">
              <input className={`${INPUT} font-mono`} value={glob} onChange={(e) => setGlob(e.target.value)} aria-label="Path glob" data-testid="grant-pattern" list="grant-globs" />
              <datalist id="grant-globs">
                {offer.suggestions.map((s) => (
                  <option key={s} value={s} />
                ))}
              </datalist>
              <span className="text-xs text-zinc-700 dark:text-zinc-300">Suggestions: {offer.suggestions.map((s) => <button key={s} type="button" className="mr-2 font-mono underline" onClick={() => setGlob(s)}>{s}</button>)}</span>
            </div>
          )}
          <div className="flex flex-wrap items-center gap-3">
            <fieldset className="flex gap-3">
              <legend className="sr-only">Scope</legend>
              <label className="flex items-center gap-1">
                <input type="radio" name="grant-scope" checked={scope === "session"} onChange={() => setScope("session")} data-testid="grant-scope-session" /> this session
              </label>
              <label className="flex items-center gap-1">
                <input type="radio" name="grant-scope" checked={scope === "workspace"} onChange={() => setScope("workspace")} data-testid="grant-scope-workspace" /> this workspace
              </label>
            </fieldset>
            <label className="flex items-center gap-1">
              for
              <select className={INPUT} value={expires} onChange={(e) => setExpires(Number(e.target.value))} data-testid="grant-expiry">
                {offer.expiryChoices.map((c) => (
                  <option key={c.seconds} value={c.seconds}>
                    {c.label}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <p className="text-zinc-700 dark:text-zinc-300" data-testid="grant-preview">
            {chosen.length === 0
              ? "Name a pattern to allow."
              : `After approving, ${offer.tool} calls matching ${chosen.map((c) => `“${c}”`).join(" or ")} in ${scope === "session" ? "this session" : "any session of this workspace"} run without asking for ${label}. Sensitive paths, denied commands and leaving the sandbox still ask.`}
          </p>
        </div>
      )}
    </div>
  );
}
