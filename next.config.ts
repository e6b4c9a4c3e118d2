import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native and WASM-loading packages stay outside the bundle (better-sqlite3 and pg are on
  // Next's built-in list already).
  serverExternalPackages: ["web-tree-sitter", "tree-sitter-bash"],
  poweredByHeader: false,
  // The build output must not depend on the network (no font downloads, no telemetry).
  typescript: { ignoreBuildErrors: false },
};

export default nextConfig;
