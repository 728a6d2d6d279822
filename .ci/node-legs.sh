#!/usr/bin/env bash
# The packaging test (the packed tarball in fresh ES module and CommonJS services, strict TypeScript, the CLI)
# under each Node the README names beside the machine's: Node 22 and 24, fetched from the npm registry as the
# packages node-<platform>-<arch>@22 and @24 (bin/node, include/node). Each leg builds the service's better-sqlite3
# for its own Node, from that Node's headers (npm_config_nodedir: the machine's npm is set to its own Node's).
set -euo pipefail
cd "$(dirname "$0")/.."

package="node-$(node -p 'process.platform + "-" + process.arch')"
home=""
trap 'if [ -n "$home" ]; then rm -rf "$home"; fi' EXIT

for major in "$@"; do
  home=$(mktemp -d)
  if ! npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$home" "$package@$major" >/dev/null; then
    echo "ci: could not install Node $major ($package@$major) from the npm registry" >&2
    exit 1
  fi
  node_dir="$home/node_modules/$package"
  version=$("$node_dir/bin/node" --version)
  echo "ci: the packaging test under Node $version"
  started=$SECONDS
  if ! PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" TTL_ADVISOR_EXPECT_NODE="$version" npx vitest run --config test/vitest.config.ts test/package/packaging.test.ts; then
    echo "ci: the packaging test failed under Node $version ($package@$major)" >&2
    exit 1
  fi
  echo "ci: Node $version leg passed in $((SECONDS - started)) s"
  rm -rf "$home"
  home=""
done
