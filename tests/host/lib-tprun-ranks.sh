# lib-tprun-ranks.sh — tprun ranks as separate processes meeting at a
# --rendezvous address, each reading its own copy of the model (as ranks
# on separate hosts would), for the tests and benchmarks in tests/host.
# Needs $tprun, $tmp (lib-tap.sh) and the array gen (tprun's flags).
# shellcheck shell=bash disable=SC2154

# A TCP port nobody listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# py FILE EXPR — EXPR of the JSON object r in FILE
py() {
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}

# How rank R is started: plain R CMD... runs CMD (replace it to run a
# rank elsewhere, e.g. in a cgroup).
plain() { shift; exec "$@"; }

# tp_ranks NAME N HOW MODEL_PREFIX — N ranks, rank r reading
# MODEL_PREFIXr.gguf, each started by HOW; rank 0's JSON in $tmp/NAME.json,
# rank r's stderr in $tmp/NAME.r.err. Fails if any rank fails.
tp_ranks() {
	local name=$1 n=$2 how=$3 prefix=$4 port r rc=0 pids=()
	port=$(free_port)
	for ((r = n - 1; r >= 0; r--)); do
		("$how" $r timeout 300 "$tprun" --rendezvous 127.0.0.1:"$port" --rank $r \
			--world "$n" --model "$prefix$r.gguf" "${gen[@]}") \
			>"$tmp/$name.$r.out" 2>"$tmp/$name.$r.err" &
		pids+=($!)
	done
	for r in "${pids[@]}"; do
		wait "$r" || rc=1
	done
	cp "$tmp/$name.0.out" "$tmp/$name.json"
	return $rc
}

# Forget the page cache of FILES (charged to whoever read them first), so
# that reading them is charged to the reader's memory cgroup.
drop_cache() {
	python3 -c 'import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$@"
}
