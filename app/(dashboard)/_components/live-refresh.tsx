"use client";

import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { useLive } from "./live";

/**
 * Re-reads the page's server data when calls change (live counts on the overview and the
 * sessions list), at most once per `intervalMs` however many events arrive.
 */
export function LiveRefresh({ intervalMs = 2000 }: { intervalMs?: number }) {
  const router = useRouter();
  const { subscribe } = useLive();
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const unsubscribe = subscribe((event) => {
      if (timer || !(event.type.startsWith("call.") || event.type === "reset")) return;
      timer = setTimeout(() => {
        timer = null;
        router.refresh();
      }, intervalMs);
    });
    return () => {
      unsubscribe();
      if (timer) clearTimeout(timer);
    };
  }, [subscribe, router, intervalMs]);
  return null;
}
