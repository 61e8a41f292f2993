#!/bin/bash
# tprun started the way cluster users start jobs (Documentation/runner.md,
# "Launchers"): under Open MPI's mpirun and under Slurm's srun (faked here
# by setting SLURM_* by hand), meeting at one --rendezvous address (or
# MASTER_ADDR/MASTER_PORT); the tokens must be those of --local. Then
# what must fail, fast and with a message naming the problem: nobody at
# the address, world sizes that disagree, a rank started twice, a model
# file that differs, rank 0's port taken, mpirun without a rendezvous.
# Over TCP on the host.  Prints TAP.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tprun=$top/tools/tprun
# shellcheck source=lib-tap.sh
source "$(dirname "$0")/lib-tap.sh"

tap_make "$top/tools/runner"

model=$tmp/m.gguf
"$tprun" --export-gguf "$model" --dim 128 --layers 2 --heads 4 --kv-heads 2 \
	--ffn 256 --vocab 512 --wtype q8_0 2>"$tmp/export.log" ||
	{ echo "Bail out! export: $(cat "$tmp/export.log")"; exit 1; }
gen=(--transport tcp --model "$model" --prompt-len 6 --tokens 8 --json
     --connect-timeout 10)

# A TCP port nobody listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# field FILE KEY — a top-level JSON value, compact
field() {
	python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]]))' "$1" "$2" 2>/dev/null
}

# same NAME JSON RANKS — JSON says RANKS ranks and --local's tokens
same() {
	local name=$1 json=$2 ranks=$3 ref=$tmp/local$3.json
	if [[ $(field "$json" ranks) == "$ranks" &&
	      $(field "$json" tokens) == "$(field "$ref" tokens)" ]]; then
		ok "$name: one $ranks-rank job, the tokens of --local $ranks"
	else
		not_ok "$name: one $ranks-rank job, the tokens of --local $ranks" \
			"got: $(cat "$json")" "errors: $(cat "$tmp/err" 2>/dev/null)" \
			"--local: $(field "$ref" tokens)"
	fi
}

for ranks in 2 4; do
	timeout 60 "$tprun" --local $ranks "${gen[@]}" >"$tmp/local$ranks.json" 2>"$tmp/err" ||
		{ echo "Bail out! --local $ranks: $(cat "$tmp/err")"; exit 1; }
done

if ! command -v mpirun >/dev/null; then
	ok "mpirun # SKIP Open MPI's mpirun is not installed"
else
	mpi=(mpirun --allow-run-as-root --oversubscribe)
	for ranks in 2 4; do
		port=$(free_port)
		timeout 60 "${mpi[@]}" -np $ranks "$tprun" --rendezvous 127.0.0.1:"$port" \
			"${gen[@]}" >"$tmp/mpi$ranks.json" 2>"$tmp/err"
		same "mpirun -np $ranks --rendezvous" "$tmp/mpi$ranks.json" $ranks
	done
	port=$(free_port)
	MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 60 "${mpi[@]}" \
		-x MASTER_ADDR -x MASTER_PORT -np 2 "$tprun" "${gen[@]}" \
		>"$tmp/mpim.json" 2>"$tmp/err"
	same "mpirun -np 2 with MASTER_ADDR/MASTER_PORT" "$tmp/mpim.json" 2
	timeout 60 "${mpi[@]}" -np 2 "$tprun" "${gen[@]}" >/dev/null 2>"$tmp/err"
	rc=$?
	if [[ $rc -ne 0 ]] && grep -q 'started by mpirun as one of 2 ranks: give --rendezvous' "$tmp/err"; then
		ok "mpirun without a rendezvous: refused, saying what is missing"
	else
		not_ok "mpirun without a rendezvous: refused, saying what is missing" "rc $rc" "$(cat "$tmp/err")"
	fi
fi

# fake_srun N ARGS... — what srun -n N does to the environment, by hand
fake_srun() {
	local count=$1 r pids=()
	shift
	for ((r = 0; r < count; r++)); do
		SLURM_PROCID=$r SLURM_NTASKS=$count SLURM_LOCALID=$r timeout 60 \
			"$tprun" "$@" >"$tmp/srun$r.out" 2>>"$tmp/err" &
		pids+=($!)
	done
	wait "${pids[@]}"
}
port=$(free_port)
: >"$tmp/err"
fake_srun 2 --rendezvous 127.0.0.1:"$port" "${gen[@]}"
same "srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID)" "$tmp/srun0.out" 2

port=$(free_port)
: >"$tmp/err"
for r in 1 0; do
	timeout 60 "$tprun" --rendezvous 127.0.0.1:"$port" --rank $r --world 2 \
		"${gen[@]}" >"$tmp/hand$r.out" 2>>"$tmp/err" &
done
wait
same "--rank R --world N --rendezvous, rank 1 first" "$tmp/hand0.out" 2

# expect NAME SECS PATTERN -- CMD... : CMD fails within SECS, stderr matches
expect() {
	local name=$1 secs=$2 pattern=$3 t0 rc
	shift 4
	t0=$SECONDS
	"$@" >/dev/null 2>"$tmp/err"
	rc=$?
	if [[ $rc -ne 0 ]] && ((SECONDS - t0 <= secs)) && grep -qE "$pattern" "$tmp/err"; then
		ok "$name: fails in $((SECONDS - t0)) s: $(grep -m1 -oE "$pattern" "$tmp/err")"
	else
		not_ok "$name" "rc $rc after $((SECONDS - t0)) s (limit $secs)" "$(cat "$tmp/err")"
	fi
}

# two ranks, each ARGS of its own: start both, fail if either fails
pair() {
	local port=$1 a=$2 b=$3 rc=0
	# shellcheck disable=SC2086
	timeout 30 "$tprun" --rendezvous 127.0.0.1:"$port" "${gen[@]}" --connect-timeout 3 $a & p0=$!
	# shellcheck disable=SC2086
	timeout 30 "$tprun" --rendezvous 127.0.0.1:"$port" "${gen[@]}" --connect-timeout 3 $b || rc=1
	wait $p0 || rc=1
	return $rc
}

port=$(free_port)
expect "a rendezvous nobody answers" 5 "rendezvous at 127\.0\.0\.1:$port: nobody answered within 2\.0 s" -- \
	timeout 30 "$tprun" --rendezvous 127.0.0.1:"$port" --rank 1 --world 2 "${gen[@]}" --connect-timeout 2

expect "world sizes that disagree" 10 "world sizes disagree: rank 1 \([0-9.]+\) was started as one of 3 ranks, rank 0 as one of 2" -- \
	pair "$(free_port)" "--rank 0 --world 2" "--rank 1 --world 3"

three() {
	local port=$1
	timeout 30 "$tprun" --rendezvous 127.0.0.1:"$port" --rank 0 --world 3 "${gen[@]}" --connect-timeout 3 &
	timeout 30 "$tprun" --rendezvous 127.0.0.1:"$port" --rank 1 --world 3 "${gen[@]}" --connect-timeout 3 &
	sleep 0.3
	timeout 30 "$tprun" --rendezvous 127.0.0.1:"$port" --rank 1 --world 3 "${gen[@]}" --connect-timeout 3
	local rc=$?
	wait
	return $rc
}
expect "a rank started twice (before the job is complete)" 10 "rank 1 registered twice, from [0-9.]+ and from [0-9.]+: was it started twice" -- \
	three "$(free_port)"

late() {
	local port=$1
	timeout 30 "$tprun" --rendezvous 127.0.0.1:"$port" --rank 0 --world 2 "${gen[@]}" --slow-ms 300 &
	timeout 30 "$tprun" --rendezvous 127.0.0.1:"$port" --rank 1 --world 2 "${gen[@]}" --slow-ms 300 >/dev/null 2>&1 &
	sleep 0.6
	timeout 30 "$tprun" --rendezvous 127.0.0.1:"$port" --rank 1 --world 2 "${gen[@]}" --connect-timeout 3
	local rc=$?
	wait
	return $rc
}
expect "a rank started twice (after the job is complete)" 10 "the job at 127\.0\.0\.1:[0-9]+ already has its 2 ranks: rank 1 \(from [0-9.]+\) came late .* or was started twice" -- \
	late "$(free_port)"

# the same size, another RoPE base in the header
"$tprun" --export-gguf "$tmp/other.gguf" --dim 128 --layers 2 --heads 4 --kv-heads 2 \
	--ffn 256 --vocab 512 --wtype q8_0 --rope-base 20000 2>/dev/null
expect "a model file that differs between ranks" 10 "rank 1 \([0-9.]+\) has another model file than rank 0: [0-9]+ bytes with header hash [0-9a-f]+, rank 0 [0-9]+ bytes with header hash" -- \
	pair "$(free_port)" "--rank 0 --world 2" "--rank 1 --world 2 --model $tmp/other.gguf"

# The port taken before the clock starts: python3 alone can take seconds to
# start on a loaded host (CI timed it into the limit, 2026-11-28).
port=$(free_port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", int(sys.argv[1]))); s.listen(); time.sleep(60)' "$port" & py=$!
for ((i = 0; i < 300; i++)); do
	[ -n "$(ss -Hltn "sport = :$port")" ] && break
	sleep 0.1
done
expect "rank 0's port already taken (rank 0 started twice)" 5 "rendezvous at 127\.0\.0\.1:[0-9]+: listen on .*: is rank 0 of this job .* already running" -- \
	timeout 30 "$tprun" --rendezvous 127.0.0.1:"$port" --rank 0 --world 2 "${gen[@]}" --connect-timeout 3
kill $py 2>/dev/null
wait $py 2>/dev/null

tap_done
