import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native and WASM-loading packages stay outside the bundle (better-sqlite3 and pg are on
  // Next's built-in list already).
  serverExternalPackages: ["web-tree-sitter", "tree-sitter-bash"],
  poweredByHeader: false,
  // The build type-checks only what it ships (app/, lib/); `npm run typecheck` and the test
  // suite's type-check cover tests, benchmarks and scripts too.
  typescript: { ignoreBuildErrors: false, tsconfigPath: "tsconfig.build.json" },
};

export default nextConfig;
