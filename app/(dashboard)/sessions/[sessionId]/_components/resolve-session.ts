import { notFound, redirect } from "next/navigation";
import { pathWithQuery } from "@/lib/dashboard/auth";
import { sessionExists, sessionsNamed, type NamedSession } from "@/lib/dashboard/sessions";

/**
 * The session a `/sessions/<ref>…` URL names: `ref` is its id (`ses_…`) or its name as the
 * dashboard shows it (the agent's X-Agent-Session value or MCP session id). A name that belongs
 * to one session redirects to the same page under the session's id (query kept), so links and
 * the pages' own forms keep using ids; a name several sessions share answers the list of them
 * (`several`, for the timeline page to show; other pages redirect to it); an unknown one is the
 * dashboard's not-found page.
 * @param sub the page below the session ("" for the timeline, "/review", "/rewind").
 */
export async function resolveSessionRef(
  ref: string,
  sub: string,
  query: Record<string, string | string[] | undefined>,
): Promise<{ id: string; several?: undefined } | { id?: undefined; several: NamedSession[] }> {
  if (await sessionExists(ref)) return { id: ref };
  const named = await sessionsNamed(ref);
  // A name with characters a URL escapes may reach here still escaped: look it up as decoded too.
  if (named.length === 0 && ref.includes("%")) named.push(...(await sessionsNamed(decoded(ref))));
  if (named.length === 1) redirect(pathWithQuery(`/sessions/${encodeURIComponent(named[0].id)}${sub}`, query));
  if (named.length === 0) notFound();
  if (sub !== "") redirect(`/sessions/${encodeURIComponent(ref)}`);
  return { several: named };
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
