# lib-ucx.sh — UCX's ucx_perftest over tbrdma devices (170-ucx, 290-net-ucx).
# Source after lib.sh and lib-verbs.sh (and lib-net.sh across a link).
#     ucx_matrix SRVDEV CLIDEV ADDR [CLIENT PREFIX...]
# runs the cases of each transport selection of ucx_tls:
# the server on SRVDEV, the client on CLIDEV connecting to ADDR (its TCP
# side channel), the client command prefixed (ip netns exec ...). A run
# passes when both ends exit 0 and the client printed its final line; with
# an explicit UCX_TLS the client's endpoint must also use CLIDEV (UCX's
# INFO line "ep_cfg[0]: tag(rc_verbs/tbr1:1)"). UCX's default selection
# prefers shared memory between processes of one host, so there the
# lanes are only printed.
# shellcheck shell=bash

# Transport selections: UCX wires RC up over UD, so rc_verbs needs ud_verbs.
# TEST ARGS (-s sizes, -n iterations) for each. rc_verbs gets every test
# and the large messages (rendezvous: RDMA READ); ud_verbs (UCX's own
# reliability over datagrams, large messages in fragments) and the default
# selection a few, to bound the run time (each run costs ~3 s in the guest).
ucx_tls=("rc_verbs,ud_verbs,self" "ud_verbs,self" "default")
ucx_cases_rc=(
	"tag_lat -s 8 -n 200"
	"tag_bw -s 65536 -n 50"
	"ucp_put_bw -s 65536 -n 50"
	"ucp_get -s 65536 -n 50"
	"ucp_am_bw -s 8 -n 200"
	"stream_bw -s 65536 -n 50"
	"tag_bw -s 4194304 -n 4"
	"ucp_put_bw -s 4194304 -n 4"
	"ucp_get -s 4194304 -n 4"
	"ucp_am_bw -s 1048576 -n 4"
)
ucx_cases_ud=(
	"tag_lat -s 8 -n 200"
	"tag_bw -s 1048576 -n 4"
	"ucp_get -s 65536 -n 50"
	"stream_bw -s 65536 -n 50"
)
ucx_cases_default=(
	"tag_lat -s 8 -n 200"
	"ucp_put_bw -s 65536 -n 50"
)

# TBR_UCX_FULL=1 (make soak): every test with every transport selection at
# 8 B, 64 KiB and 4 MiB, the whole matrix the selftests sample.
if [[ ${TBR_UCX_FULL:-0} == 1 ]]; then
	ucx_cases_rc=()
	for t in tag_lat tag_bw ucp_put_bw ucp_get ucp_am_bw stream_bw; do
		ucx_cases_rc+=("$t -s 8 -n 200" "$t -s 65536 -n 50" "$t -s 4194304 -n 4")
	done
	ucx_cases_ud=("${ucx_cases_rc[@]}")
	ucx_cases_default=("${ucx_cases_rc[@]}")
fi

UCX_PORT=${UCX_PORT:-17330}

# ucx_run NAME TLS SRVDEV CLIDEV ADDR PREFIX TEST ARGS...
ucx_run() {
	local name=$1 tls=$2 sdev=$3 cdev=$4 addr=$5 prefix=$6 lanes
	shift 6
	local common="UCX_LOG_LEVEL=info UCX_WARN_UNUSED_ENV_VARS=n"
	[[ $tls == default ]] || common+=" UCX_TLS=$tls"
	PORT=$((++UCX_PORT))
	local srv="env $common UCX_NET_DEVICES=$sdev:1 ucx_perftest -p $PORT -w 5 -t $*"
	local cli="$prefix env $common UCX_NET_DEVICES=$cdev:1 ucx_perftest $addr -p $PORT -w 5 -t $*"
	run_pair_once "$name" 90 "$srv" "$cli" || return 1
	local log=$TBRDMA_OUT/$name.client.log
	grep -q '^Final:' "$log" || { echo "--- $name: no final line"; cat "$log"; return 1; }
	lanes=$(sed -n 's/.*ep_cfg\[0\]: //p' "$log" | head -n 1)
	echo "   lanes: $lanes; $(grep '^Final:' "$log" | awk '{print "median", $3, "us,", $6, "MB/s"}')"
	if [[ $tls != default && $lanes != *"/$cdev:1"* ]]; then
		echo "--- $name: UCX_TLS=$tls but the endpoint does not use $cdev"
		return 1
	fi
}

# ucx_matrix SRVDEV CLIDEV ADDR [PREFIX] — every case; fails at the end
# with the list of failed runs.
ucx_matrix() {
	local sdev=$1 cdev=$2 addr=$3 prefix=${4:-} tls c n=0 failed=()
	local cases
	for tls in "${ucx_tls[@]}"; do
		case $tls in
		rc_verbs*) cases=("${ucx_cases_rc[@]}") ;;
		ud_verbs*) cases=("${ucx_cases_ud[@]}") ;;
		*) cases=("${ucx_cases_default[@]}") ;;
		esac
		for c in "${cases[@]}"; do
			n=$((n + 1))
			echo "== UCX_TLS=$tls $c"
			# shellcheck disable=SC2086  # TEST and its arguments
			ucx_run "ucx-$n" "$tls" "$sdev" "$cdev" "$addr" "$prefix" $c ||
				failed+=("$tls $c")
		done
	done
	((${#failed[@]} == 0)) ||
		fail "${#failed[@]} of $n ucx_perftest runs failed: $(printf '[%s] ' "${failed[@]}")"
	echo "all $n ucx_perftest runs passed"
}
