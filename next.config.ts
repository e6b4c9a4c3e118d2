import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native and WASM-loading packages stay outside the bundle (better-sqlite3 and pg are on
  // Next's built-in list already).
  // jschardet (a 1 MB detection model) and iconv-lite (codec tables loaded on demand) too.
  serverExternalPackages: ["web-tree-sitter", "tree-sitter-bash", "jschardet", "iconv-lite"],
  poweredByHeader: false,
  // The build type-checks only what it ships (app/, lib/); `npm run typecheck` and the test
  // suite's type-check cover tests, benchmarks and scripts too.
  typescript: { ignoreBuildErrors: false, tsconfigPath: "tsconfig.build.json" },
};

export default nextConfig;
