#!/bin/sh
echo "agent-reach: the native Prisma schema engine is not used here; migrations are applied by lib/db/migrate.ts (and authored with the offline WASM tool, see docs/DEVELOPMENT.md)." >&2
exit 1
