#!/bin/bash
# tools/tprun, the tensor-parallel runner, over the loopback device:
# N = 1, 2, 3, 4 ranks x synthetic and GGUF (Q8_0) weights x mesh and ring
# all-reduce over RDMA, and N = 2, 3, 4 over TCP. Every run must produce
# the tokens of the 1-rank run and logits within the tolerance of
# Documentation/runner.md. Also: the JSON fields the interface promises,
# auto choosing mesh for small and ring for large messages, and a GGUF
# export computing the very bits of the synthetic weights, and --compare
# reporting the baselines; mpirun -np 2 with --rendezvous over RDMA.
# Device: TBR_TEST_DEV (lib-verbs.sh), tbrdma loopback by default.
# timeout: 420
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-tprun.sh"

verbs_setup
before=$(verbs_resources)
gen=(--seed 11 --tokens 8 --prompt-len 8 --json --logits)
gguf=$TBRDMA_OUT/tiny-q8_0.gguf
# Head dim 32: every head is whole Q8_0 blocks of Wo (with 16, two heads
# share a block and 3 or 4 ranks leave some ranks without heads).
tp_run export "${TP_SHAPE[@]}" --head-dim 32 --seed 11 --wtype q8_0 --export-gguf "$gguf" ||
	fail "GGUF export"
echo "GGUF: $(stat -c %s "$gguf") bytes"

failed=()
for model in synthetic gguf; do
	if [[ $model == synthetic ]]; then
		margs=(--synthetic "${TP_SHAPE[@]}")
	else
		margs=(--model "$gguf")
	fi
	tp_run "$model-1" --local 1 --devices "$TBR_TEST_DEV" "${margs[@]}" "${gen[@]}" ||
		fail "$model: the 1-rank run"
	ref=$TBRDMA_OUT/$model-1.json
	echo "$model, 1 rank: tokens $(tp_field "$ref" tokens)"
	for n in 2 3 4; do
		for algo in mesh ring; do
			name=$model-$n-$algo
			if tp_run "$name" --local "$n" --devices "$TBR_TEST_DEV" \
				--transport rdma --algorithm "$algo" "${margs[@]}" "${gen[@]}" &&
				tp_compare "$name" "$ref" "$TBRDMA_OUT/$name.json" &&
				[[ $(tp_field "$TBRDMA_OUT/$name.json" allreduce_${algo}_calls) == 32 ]]; then
				:
			else
				failed+=("$name")
			fi
		done
	done
done

ref=$TBRDMA_OUT/synthetic-1.json
for n in 2 3 4; do
	name=tcp-$n
	tp_run "$name" --local "$n" --transport tcp --synthetic "${TP_SHAPE[@]}" "${gen[@]}" &&
		tp_compare "$name" "$ref" "$TBRDMA_OUT/$name.json" || failed+=("$name")
done

# The interface: these fields, with sensible values.
out=$TBRDMA_OUT/synthetic-4-mesh.json
for f in ranks transport tokens decode_tokens_per_s prefill_tokens_per_s \
	allreduce_p50_us allreduce_p99_us allreduce_bytes; do
	v=$(tp_field "$out" "$f") || { failed+=("field $f"); continue; }
	echo "  $f: ${v:0:60}"
done
[[ $(tp_field "$out" ranks) == 4 && $(tp_field "$out" transport) == '"rdma"' &&
   $(tp_field "$out" allreduce_calls) == 32 ]] || failed+=("JSON values")
# 2 all-reduces per layer and step: prefill 1 step + 7 decode steps, 2 layers
# = 32 calls of 64 floats each way; mesh sends 3 x 256 B per decode call.
[[ $(tp_field "$out" allreduce_bytes) == $((4 * 3 * 8 * 64 * 4 + 28 * 3 * 64 * 4)) ]] ||
	failed+=("bytes moved: $(tp_field "$out" allreduce_bytes)")

# auto: ring for the prefill (8 x 64 floats = 2 KiB >= --ring-min 1024),
# mesh for decode (256 B).
if tp_run auto-4 --local 4 --devices "$TBR_TEST_DEV" --ring-min 1024 \
	--synthetic "${TP_SHAPE[@]}" "${gen[@]}" &&
	tp_compare auto-4 "$ref" "$TBRDMA_OUT/auto-4.json"; then
	rc=$(tp_field "$TBRDMA_OUT/auto-4.json" allreduce_ring_calls)
	mc=$(tp_field "$TBRDMA_OUT/auto-4.json" allreduce_mesh_calls)
	echo "auto: $rc ring, $mc mesh calls"
	[[ $rc == 4 && $mc == 28 ]] || failed+=("auto choice")
else
	failed+=(auto-4)
fi

# --compare: the TCP and 1-rank baselines and the speedups are reported.
if tp_run compare-2 --local 2 --devices "$TBR_TEST_DEV" --compare \
	--synthetic "${TP_SHAPE[@]}" "${gen[@]}"; then
	for f in baseline_1rank baseline_tcp speedup_vs_1rank speedup_vs_tcp; do
		v=$(tp_field "$TBRDMA_OUT/compare-2.json" "$f") || { failed+=("compare: $f"); continue; }
		echo "  $f: $v"
		[[ $f != baseline_* || $v == *'"tokens_match": true'* ]] ||
			failed+=("compare: $f tokens differ")
	done
else
	failed+=(compare-2)
fi

# An F32 export loads as the same bits as the synthetic weights.
tp_run f32-export "${TP_SHAPE[@]}" --seed 11 --export-gguf "$TBRDMA_OUT/f32.gguf" &&
	tp_run f32-gguf --model "$TBRDMA_OUT/f32.gguf" "${gen[@]}" || failed+=("f32 export")
a=$(tp_field "$ref" logits_checksum) b=$(tp_field "$TBRDMA_OUT/f32-gguf.json" logits_checksum)
echo "logits checksum: synthetic $a, f32 GGUF $b"
[[ -n $a && $a == "$b" ]] || failed+=("f32 GGUF bits")

# Started by Open MPI's mpirun, meeting at one --rendezvous address, over
# RDMA: one 2-rank job with the bits of --local 2 (mesh in both).
mpi=$TBRDMA_OUT/mpirun-2.json
if ! command -v mpirun >/dev/null; then
	echo "mpirun: not installed, skipped"
elif timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 "$TPRUN" \
		--rendezvous 127.0.0.1:29533 --transport rdma --devices "$TBR_TEST_DEV" \
		--synthetic "${TP_SHAPE[@]}" "${gen[@]}" >"$mpi" 2>"$TBRDMA_OUT/mpirun-2.err" &&
	[[ $(tp_field "$mpi" ranks) == 2 && $(tp_field "$mpi" transport) == '"rdma"' ]] &&
	tp_compare mpirun-2 "$ref" "$mpi" &&
	[[ $(tp_field "$mpi" logits_checksum) == "$(tp_field "$TBRDMA_OUT/synthetic-2-mesh.json" logits_checksum)" ]]; then
	echo "mpirun -np 2 --rendezvous over RDMA: the bits of --local 2"
else
	cat "$TBRDMA_OUT/mpirun-2.err"
	failed+=("mpirun -np 2")
fi

after=$(verbs_resources)
[[ $after == "$before" ]] || failed+=("objects left on the device: $after")
((${#failed[@]} == 0)) || fail "${#failed[@]} failed: ${failed[*]}"
echo "all runs match the 1-rank run"
