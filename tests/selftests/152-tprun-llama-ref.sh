#!/bin/bash
# tprun over the loopback device against llama.cpp: the models `make
# llama-ref` exported on the host in every weight type (and the Qwen2,
# RoPE-scaling and byte-level BPE variants), with llama.cpp's greedy
# answer to each (build/llama-ref, kept by compare.sh --save-ref: llama.cpp
# itself would take minutes to start in this guest, and its answer depends
# only on the file and the prompt); here tprun decodes the first prompt
# with 2 and 4 ranks over RDMA on tbrlo0 (1 rank uses no transport: the
# host checks it) and must give the same prompt tokens, tokens and text.
# Three weight types: a float one, Q8_0 and a K-quant (each has its own
# shard layout; what crosses the transport, the F32 activations and their
# all-reduce, is the same for every type).  The host's `make llama-ref`
# checks every type, the logits and the architecture and tokenizer
# variants with 1, 2 and 4 ranks over TCP: none of those touch the
# transport (every type here took 132 s, with the variants 329 s).
# About a minute.
# timeout: 600
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-tprun.sh"

refs=$TBRDMA_ROOT/build/llama-ref
[[ -f $refs/f32_prompt_0.json ]] ||
	skip "no saved llama.cpp answers in $refs (make llama-ref writes them)"
verbs_setup
verbs_is_rxe && skip "runs on tbrdma devices"

rc=0
TMPDIR=$TBRDMA_OUT "$TBRDMA_ROOT/tests/llama-ref/compare.sh" --ref "$refs" \
	--prompts 0 --ranks "2 4" --types "f16 q8_0 q4_k" --types-only --no-logits \
	--tprun "$TPRUN --local {N} --transport rdma --devices $TBR_TEST_DEV" \
	>"$TBRDMA_OUT/compare.tap" 2>&1 || rc=$?
grep -E '^(not )?ok ' "$TBRDMA_OUT/compare.tap" | sed -n '1,400p'
# grep -c exits 1 when it counts nothing (set -e)
n_ok=$(grep -c '^ok ' "$TBRDMA_OUT/compare.tap" || true)
n_bad=$(grep -c '^not ok ' "$TBRDMA_OUT/compare.tap" || true)
((rc == 0 && n_bad == 0 && n_ok >= 9)) ||
	{ grep -A6 '^not ok' "$TBRDMA_OUT/compare.tap" | head -40
	  fail "compare.sh: $n_ok ok, $n_bad not ok (exit $rc)"; }
echo "tprun over $TBR_TEST_DEV = llama.cpp: $n_ok checks"
