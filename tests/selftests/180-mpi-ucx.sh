#!/bin/bash
# Open MPI over UCX (Debian's openmpi-bin, --mca pml ucx), unmodified, on
# the loopback device: tests/progs/mpi_check (MPI_Allreduce, MPI_Alltoall,
# MPI_Sendrecv around a ring, MPI_Isend/MPI_Irecv between every pair,
# MPI_Bcast; 8 B to 256 KiB, every result checked) with 2 and 4 ranks
# over UCX_TLS=rc_verbs,ud_verbs,self and 2 ranks over ud_verbs,self.
# UCX must put the ranks' endpoints on tbrlo0 (its INFO lines name the
# lanes).
# timeout: 180
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"

require_cmd mpirun
[[ -x $TBR_PROGS/mpi_check ]] || skip "tests/progs/mpi_check not built (mpicc: libopenmpi-dev)"
verbs_setup
verbs_is_rxe && skip "runs on tbrdma devices"

failed=()
n=0
for run in "rc_verbs,ud_verbs,self 2" "rc_verbs,ud_verbs,self 4" "ud_verbs,self 2"; do
	read -r tls np <<<"$run"
	n=$((n + 1))
	log=$TBRDMA_OUT/mpi-$n.log
	echo "== $np ranks, UCX_TLS=$tls"
	t0=$SECONDS
	rc=0
	timeout 120 mpirun --allow-run-as-root --oversubscribe -np "$np" \
		--mca pml ucx -x RDMAV_DRIVERS -x UCX_NET_DEVICES=tbrlo0:1 \
		-x UCX_TLS="$tls" -x UCX_LOG_LEVEL=info \
		"$TBR_PROGS/mpi_check" --max 262144 --iters 2 >"$log" 2>&1 || rc=$?
	{ grep '^mpi_check:' "$log" || true; } | sed 's/^/   /'
	lanes=$(sed -n 's/.*ep_cfg\[1\]: //p' "$log" | sort -u | tr '\n' ' ')
	echo "   lanes between ranks: $lanes($((SECONDS - t0)) s)"
	if ((rc)) || ! grep -q '^mpi_check: PASS' "$log" ||
		[[ -z $lanes || $lanes != *"/tbrlo0:1"* ]]; then
		echo "--- exit $rc"; cat "$log"
		failed+=("$np ranks $tls")
	fi
done
((${#failed[@]} == 0)) || fail "${#failed[@]} of $n mpirun runs failed: $(printf '[%s] ' "${failed[@]}")"
echo "all $n Open MPI runs passed with checked results"
