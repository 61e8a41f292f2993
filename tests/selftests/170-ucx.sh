#!/bin/bash
# UCX, unmodified (Debian's ucx-utils), on the loopback device: ucx_info
# lists tbrlo0 with rc_verbs and ud_verbs, and ucx_perftest's tag, RMA,
# active-message and stream tests pass with UCX_TLS=rc_verbs,ud_verbs,self,
# ud_verbs,self and UCX's default selection (lib-ucx.sh).
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-ucx.sh"

require_cmd ucx_info ucx_perftest
verbs_setup
verbs_is_rxe && skip "UCX runs on tbrdma devices here"

ucx_info -d >"$TBRDMA_OUT/ucx_info.txt" 2>&1 || fail "ucx_info -d"
for tl in rc_verbs ud_verbs; do
	grep -A1 "Transport: $tl\$" "$TBRDMA_OUT/ucx_info.txt" | grep -q 'Device: tbrlo0:1' ||
		fail "ucx_info -d does not list $tl on tbrlo0:1"
done
echo "ucx_info -d: rc_verbs and ud_verbs on tbrlo0:1"
ucx_matrix tbrlo0 tbrlo0 127.0.0.1
