"use client";

import { ErrorPanel } from "./_components/states";

/** Shown when a dashboard page fails to render; "Try again" re-fetches it. */
export default function DashboardError({ error, retry }: { error: unknown; retry: () => void }) {
  return <ErrorPanel error={error} retry={retry} />;
}
