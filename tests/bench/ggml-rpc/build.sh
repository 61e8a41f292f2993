#!/bin/bash
# Build ggml (with its RPC backend and RDMA transport) from a source tree
# that is NOT part of this repository, and our two programs on ggml's public
# RPC API, into OUT (default /var/tmp): OUT/ggml_rpc_server, OUT/ggml_rpc_client.
#   build.sh GGML_SRC [OUT]
# GGML_SRC is a checkout of github.com/ggml-org/ggml (issue 35 used
# d99724f2).  The guest sees the host's root, so programs built under
# /var/tmp run there unchanged.  At most -j2 (the shared 2-core host).
set -euo pipefail
src=${1:?usage: build.sh GGML_SRC [OUT]}
out=${2:-/var/tmp}
here=$(cd "$(dirname "$0")" && pwd)
b=$src/build
cmake -S "$src" -B "$b" -DCMAKE_BUILD_TYPE=Release -DGGML_RPC=ON -DGGML_RPC_RDMA=ON \
	-DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF -DGGML_NATIVE=OFF \
	-DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON >/dev/null
grep -q 'GGML_RPC_RDMA:BOOL=ON' "$b/CMakeCache.txt" || { echo "ggml: RDMA transport not enabled (libibverbs-dev?)" >&2; exit 1; }
cmake --build "$b" -j2 --target ggml ggml-rpc >/dev/null
for p in ggml_rpc_server ggml_rpc_client; do
	gcc -O2 -Wall -Wextra -Werror -I"$src/include" "$here/$p.c" -o "$out/$p" \
		-L"$b/src" -L"$b/src/ggml-rpc" -lggml -lggml-base -lggml-cpu -lggml-rpc \
		-Wl,-rpath,"$b/src:$b/src/ggml-rpc"
done
echo "built $out/ggml_rpc_server $out/ggml_rpc_client against $src"
