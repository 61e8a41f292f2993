# lib-tprun.sh — helpers for the tprun selftests (150-tprun-*.sh). Source
# after lib.sh (and lib-verbs.sh for RDMA runs).
# shellcheck shell=bash

TPRUN=$TBRDMA_ROOT/tools/tprun
[[ -x $TPRUN ]] || fail "$TPRUN not built (make runner)"
# The tiny shape every run uses: fast under TCG, yet 4 heads over 2 K/V
# heads (3 ranks split the heads 1/1/2 and share a K/V head), ffn 128
# (cut on 32s), head dim 16 (two heads make a Q8_0 block of the attention
# output: with 3 or 4 ranks some ranks hold no heads).
# shellcheck disable=SC2034  # used by the tests that source this
TP_SHAPE=(--dim 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128 --vocab 256)
# The tolerance of Documentation/runner.md: N-rank logits within 1e-3 of
# the largest 1-rank logit (at least 1).
TP_TOL=1e-3

# tp_run NAME ARGS... — tprun ARGS with a time limit; stdout to
# $TBRDMA_OUT/NAME.json, stderr to NAME.err, shown when it fails.
tp_run() {
	local name=$1 rc=0 t0=$SECONDS
	shift
	timeout 120 "$TPRUN" "$@" >"$TBRDMA_OUT/$name.json" \
		2>"$TBRDMA_OUT/$name.err" || rc=$?
	TP_SECS=$((SECONDS - t0))
	if ((rc)); then
		echo "--- $name: tprun $* exited with $rc after $TP_SECS s"
		cat "$TBRDMA_OUT/$name.err"
		return 1
	fi
}

# tp_field FILE KEY — the value of a top-level "KEY": VALUE line.
tp_field() {
	local line re="^  \"$2\": (.*)$"
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			line=${BASH_REMATCH[1]}
			printf '%s\n' "${line%,}"
			return 0
		fi
	done <"$1"
	echo "tp_field: no $2 in $1" >&2
	return 1
}

# tp_logits_diff A B — "MAXDIFF SCALE": the largest |a - b| over the
# "logits" arrays of two outputs, and max(1, max |a|).
tp_logits_diff() {
	awk '
	function grab(file,   line, s) {
		while ((getline line < file) > 0)
			if (line ~ /^  "logits": \[/) {
				s = line; sub(/^  "logits": \[/, "", s); sub(/\].*/, "", s)
				return s
			}
		return ""
	}
	BEGIN {
		na = split(grab(ARGV[1]), a, /, /); nb = split(grab(ARGV[2]), b, /, /)
		if (na == 0 || na != nb) { print "nan nan"; exit 1 }
		m = 0; s = 1
		for (i = 1; i <= na; i++) {
			d = a[i] - b[i]; if (d < 0) d = -d; if (d > m) m = d
			v = a[i] < 0 ? -a[i] : a[i]; if (v > s) s = v
		}
		printf "%.3g %.3g\n", m, s
	}' "$1" "$2"
}

# tp_compare NAME REF RUN — RUN made the tokens of REF, its logits are
# within the tolerance; prints one line, returns 1 on a mismatch.
tp_compare() {
	local name=$1 ref=$2 run=$3 t0 t1 d s
	t0=$(tp_field "$ref" tokens) || return 1
	t1=$(tp_field "$run" tokens) || return 1
	read -r d s < <(tp_logits_diff "$ref" "$run")
	if [[ $t0 != "$t1" ]]; then
		echo "FAIL $name: tokens $t1, 1 rank made $t0"
		return 1
	fi
	if ! awk -v d="$d" -v s="$s" -v t="$TP_TOL" 'BEGIN { exit !(d == d + 0 && d <= t * s) }'; then
		echo "FAIL $name: logits differ by $d (tolerance $TP_TOL x $s)"
		return 1
	fi
	echo "ok   $name: same tokens, logits within $d (tolerance $TP_TOL x $s), all-reduce p50 $(tp_field "$run" allreduce_p50_us) us, decode $(tp_field "$run" decode_tokens_per_s) tokens/s, ${TP_SECS:-?} s"
}
