#!/bin/bash
# The doorbell file (tests/progs/doorbell): the provider's context has one
# and rings its own QPs through it; it refuses the kernel's QP, another
# context's QP, made-up and oversized numbers and other requests; a context
# gets one only when it asks and can be told the descriptor; bad request
# data is refused; once the context is gone it answers EIO; a forked child
# gets EACCES.  50-unload-busy checks that an open one keeps the module in.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"

verbs_is_rxe && skip "the doorbell file is tbrdma's own"
prog=$TBR_PROGS/doorbell
[[ -x $prog ]] || fail "$prog not built (make test-progs)"
verbs_setup
"$prog" "$TBR_TEST_DEV" || fail "doorbell"
