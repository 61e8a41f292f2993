#!/bin/bash
# The uverbs input fuzzer: tests/progs/fuzz_uverbs makes 10^5 random calls
# (random and malformed verbs, raw uverbs commands and ioctls, scribbles on
# every shared ring while traffic runs), seeded and reproducible. Every call
# must return success or an error, every completion a valid status; the
# harness fails the test on any kernel WARNING/BUG. Afterwards the device
# still works (ibv_rc_pingpong -c), every object is gone, the module unloads.
#
# Knobs (lib-verbs.sh explains how to set them for a run): TBR_FUZZ_SEED
# (default: random, printed), TBR_FUZZ_ITERS (default 100000),
# TBR_FUZZ_LAYERS (default verbs,raw,ring). Replay a seed on the host side of
# a failure with: make -C tests/progs fuzz-soak FUZZ_SEED=S FUZZ_ITERS=N
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"

prog=$TBR_PROGS/fuzz_uverbs
[[ -x $prog ]] || fail "$prog not built (make test-progs)"
require_cmd ibv_rc_pingpong
verbs_setup

seed=${TBR_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
iters=${TBR_FUZZ_ITERS:-100000}
layers=${TBR_FUZZ_LAYERS:-verbs,raw,ring}
echo "fuzz: seed $seed, $iters iterations, layers $layers on $TBR_TEST_DEV"
echo "fuzz: replay with TBR_FUZZ_SEED=$seed TBR_FUZZ_ITERS=$iters"

before=$(verbs_resources)
t0=$SECONDS
# The watchdog names the call that hung, should one ever hang.
"$prog" -d "$TBR_TEST_DEV" -g "$TBR_TEST_GID" --seed "$seed" \
	--iters "$iters" --layers "$layers" --watchdog 60 ||
	fail "fuzz_uverbs failed (seed $seed, $iters iterations)"
echo "fuzz: $((SECONDS - t0)) s"

after=$(verbs_resources)
echo "device objects before: $before"
echo "device objects after:  $after"
[[ $after == "$before" ]] || fail "objects left behind on $TBR_TEST_DEV"

PORT=18615
cmd="ibv_rc_pingpong -d $TBR_TEST_DEV -g $TBR_TEST_GID -c -p $PORT -s 4096 -n 50"
run_pair rc-after-fuzz 60 "$cmd" "$cmd 127.0.0.1" || fail "ibv_rc_pingpong after the fuzzer"
verbs_teardown || fail "the device/module did not go away after the fuzzer"
echo "device removed, module unloaded"
