#!/bin/bash
# Install the llama.cpp reference of tests/llama-ref (compare.sh):
# node-llama-cpp's prebuilt CPU build of llama.cpp, from the npm registry,
# at the versions package-lock.json pins, into tests/llama-ref/node_modules.
# Needs Node.js 20 or later: taken from Debian's nodejs/npm packages when
# there is no node at all; when the node found is older (Debian 12 ships
# 18), Node 20 itself is installed from the npm registry (the `node`
# package) into tests/llama-ref/runtime, and compare.sh uses it.
# Cheap when everything is there already.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "llama-ref setup: needs node and npm (apt-get install nodejs npm, as root)" >&2
		exit 1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends nodejs npm
fi

major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ] && [ ! -x runtime/node_modules/.bin/node ]; then
	echo "llama-ref setup: node $(node --version) is too old, installing Node 20 from the npm registry"
	npm install --prefix runtime --no-audit --no-fund --no-save node@20
fi
if [ -x runtime/node_modules/.bin/node ]; then
	PATH=$here/runtime/node_modules/.bin:$PATH
fi

if [ -f node_modules/.package-lock.json ] &&
   cmp -s <(sed -n '/"node_modules\/node-llama-cpp"/,/}/p' package-lock.json) \
	  <(sed -n '/"node_modules\/node-llama-cpp"/,/}/p' node_modules/.package-lock.json); then
	echo "llama-ref setup: node-llama-cpp present"
	exit 0
fi
echo "llama-ref setup: installing node-llama-cpp (llama.cpp's prebuilt CPU build)"
# Not `npm ci`: npm 11 then wants the other platforms' optional builds
# in the lock file too, and refuses it without them; `npm install` takes
# the lock's versions as they are and leaves the file alone.
npm install --omit=optional --ignore-scripts --no-audit --no-fund --no-save
