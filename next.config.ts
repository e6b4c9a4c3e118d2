import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native and WASM-loading packages stay outside the bundle (better-sqlite3 and pg are on
  // Next's built-in list already).
  // jschardet (a 1 MB detection model) and iconv-lite (codec tables loaded on demand) too.
  serverExternalPackages: ["web-tree-sitter", "tree-sitter-bash", "jschardet", "iconv-lite"],
  poweredByHeader: false,
  experimental: {
    // proxy.ts (the Host/Origin check) sees every request, and Next buffers a request's body for
    // it up to this size, passing only that much on to the route: keep it above the largest body
    // the gateway accepts (AGENT_REACH_MAX_BODY_BYTES, default 16 MiB), so the tool routes see the
    // whole body and answer payload_too_large themselves past their own limit.
    proxyClientMaxBodySize: Number(process.env.AGENT_REACH_MAX_BODY_BYTES ?? 16 * 1024 * 1024) + 1024 * 1024,
  },
  // The build type-checks only what it ships (app/, lib/); `npm run typecheck` and the test
  // suite's type-check cover tests, benchmarks and scripts too.
  typescript: { ignoreBuildErrors: false, tsconfigPath: "tsconfig.build.json" },
};

export default nextConfig;
