#!/bin/bash
# Install the official openai client (npm) that tests tprun serve
# (tests/host/test-tprun-serve.sh, selftest 265) into
# tests/serve-client/node_modules, at the version package-lock.json pins.
# Needs node and npm (tests/llama-ref/setup.sh installs them). Cheap when
# it is there already.
set -euo pipefail

cd "$(dirname "$0")"
if [ -f node_modules/openai/package.json ] &&
   [ "$(node -p 'require("./node_modules/openai/package.json").version')" = \
     "$(node -p 'require("./package-lock.json").packages["node_modules/openai"].version')" ]; then
	echo "serve-client setup: openai present"
	exit 0
fi
echo "serve-client setup: installing the openai client"
npm install --ignore-scripts --no-audit --no-fund --no-save
