/**
 * Next.js start-up hook (runs once per server process). The Node.js-only work lives in
 * lib/runtime/server-start.ts so the Edge bundle never imports it.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startServer } = await import("@/lib/runtime/server-start");
    await startServer();
  }
}
