import type { InboxItem } from "@/lib/dashboard/approvals";

/** What a call is about, in full: the command, the path or the URL. */
export function itemSubject(item: InboxItem): string {
  if (item.command) return item.command.command;
  const args = (item.args ?? {}) as Record<string, unknown>;
  return item.preview.path ?? item.path ?? (typeof args.url === "string" ? args.url : JSON.stringify(args));
}

/** A call named in one short line for banners and announcements: "run_command npm test". */
export function itemTitle(item: InboxItem): string {
  const subject = itemSubject(item).split("\n")[0];
  const short = subject.length > 80 ? `${subject.slice(0, 79)}…` : subject;
  return `${item.tool} ${short}`;
}
