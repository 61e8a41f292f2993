# lib-memcg.sh — memory cgroups for the shell tests in tests/host: a
# group with a memory limit, a command run inside it, its OOM kills.
# cgroup v1 (/sys/fs/cgroup/memory, memory.limit_in_bytes, these machines)
# or v2 (a cgroup2 /sys/fs/cgroup with the memory controller: memory.max).
# memcg_init says which, or fails when neither is writable (not root).
# shellcheck shell=bash

memcg_root=
memcg_version=
memcg_groups=()

memcg_init() {
	if [[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]] &&
	   grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		memcg_root=/sys/fs/cgroup
		memcg_version=2
		grep -qw memory "$memcg_root/cgroup.subtree_control" ||
			echo +memory >"$memcg_root/cgroup.subtree_control" 2>/dev/null ||
			return 1
	elif [[ -w /sys/fs/cgroup/memory/cgroup.procs ]]; then
		memcg_root=/sys/fs/cgroup/memory
		memcg_version=1
	else
		return 1
	fi
	[[ -w $memcg_root ]]
}

# memcg_new NAME BYTES — a group limited to BYTES (no swap either)
memcg_new() {
	local dir=$memcg_root/$1
	mkdir "$dir" || return 1
	memcg_groups+=("$dir")
	if [[ $memcg_version == 1 ]]; then
		echo "$2" >"$dir/memory.limit_in_bytes" || return 1
		[[ ! -e $dir/memory.memsw.limit_in_bytes ]] ||
			echo "$2" >"$dir/memory.memsw.limit_in_bytes" 2>/dev/null || :
	else
		echo "$2" >"$dir/memory.max" || return 1
		[[ ! -e $dir/memory.swap.max ]] || echo 0 >"$dir/memory.swap.max"
	fi
}

# memcg_exec NAME CMD... — CMD in the group (run it in the background
# or in a subshell: the shell itself moves into the group)
memcg_exec() {
	local dir=$memcg_root/$1
	shift
	echo "$BASHPID" >"$dir/cgroup.procs" || return 1
	exec "$@"
}

# memcg_oom_kills NAME — how many processes the kernel OOM-killed in it
memcg_oom_kills() {
	local dir=$memcg_root/$1
	if [[ $memcg_version == 1 ]]; then
		awk '$1 == "oom_kill" { print $2; found = 1 } END { if (!found) print 0 }' \
			"$dir/memory.oom_control"
	else
		awk '$1 == "oom_kill" { print $2; found = 1 } END { if (!found) print 0 }' \
			"$dir/memory.events"
	fi
}

# memcg_peak NAME — the group's peak usage in bytes (page cache included)
memcg_peak() {
	local dir=$memcg_root/$1
	if [[ $memcg_version == 1 ]]; then
		cat "$dir/memory.max_usage_in_bytes"
	else
		cat "$dir/memory.peak" 2>/dev/null || echo 0
	fi
}

memcg_cleanup() {
	local dir
	for dir in "${memcg_groups[@]}"; do
		rmdir "$dir" 2>/dev/null || :
	done
}
