#!/bin/bash
# The tbrdma admin tool as a program, on the host (whose kernel has no RDMA):
# usage errors, "module not loaded" and "no such netdev" exit codes, the
# Thunderbolt opt-in written under a temporary /etc and applied to a fake
# module parameter, `thunderbolt status --json` parsed back on a fake sysfs
# tree with a TB5 domain where one link runs at half speed, "not root", and
# the man page rendering without warnings.  Prints TAP.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tool=$top/tools/tbrdma
# shellcheck source=lib-tap.sh
source "$(dirname "$0")/lib-tap.sh"

# expect NAME WANT_RC OUTPUT_ERE CMD...: exit code, and stdout+stderr match.
expect() {
	local name=$1 want=$2 ere=$3 out rc=0
	shift 3
	out=$("$@" 2>&1) || rc=$?
	if [[ $rc -ne $want ]]; then
		not_ok "$name" "exit $rc, expected $want" "$out"
	elif [[ -n $ere ]] && ! grep -qE -- "$ere" <<<"$out"; then
		not_ok "$name" "output does not match /$ere/" "$out"
	else
		ok "$name"
	fi
}

make -s -C "$top/tools/admin" >"$tmp/build.log" 2>&1 ||
	{ echo "Bail out! tools/admin does not build: $(tail -5 "$tmp/build.log")"; exit 1; }
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")

# --- command line -----------------------------------------------------------
expect "--help: exit 0" 0 '^usage: tbrdma' "$tool" --help
out=$("$tool" --help)
if grep -q 'tbrdma status' <<<"$out" && grep -q 'tbrdma stats' <<<"$out" &&
	grep -q 'tbrdma attach' <<<"$out" && grep -q 'tbrdma detach' <<<"$out" &&
	grep -q 'tbrdma thunderbolt' <<<"$out" && grep -q 'Exit codes' <<<"$out"; then
	ok "usage lists status, stats, attach, detach, thunderbolt, exit codes"
else
	not_ok "usage lists status, stats, attach, detach, thunderbolt, exit codes" "$out"
fi
expect "--version is dkms.conf's version" 0 "^tbrdma $version\$" "$tool" --version
expect "help for one command" 0 '^usage: tbrdma stats .*-w SECONDS' "$tool" help stats
expect "status --help" 0 '^usage: tbrdma status' "$tool" status --help
expect "no command: usage error" 1 'usage:' "$tool"
expect "unknown command: usage error" 1 "unknown command 'frobnicate'" "$tool" frobnicate
expect "status with two devices: usage error" 1 'usage: tbrdma status' "$tool" status a b
expect "stats -w 0: usage error" 1 'seconds > 0' "$tool" stats -w 0
expect "stats -w junk: usage error" 1 'seconds > 0' "$tool" stats -w 1x
expect "stats -c 1.5: usage error" 1 'whole number' "$tool" stats -c 1.5
expect "attach without a netdev: usage error" 1 'usage: tbrdma attach' "$tool" attach
expect "detach with two names: usage error" 1 'usage: tbrdma detach' "$tool" detach a b
expect "thunderbolt without an action: usage error" 1 'usage: tbrdma thunderbolt' \
	"$tool" thunderbolt
expect "thunderbolt frob: usage error" 1 'usage: tbrdma thunderbolt' "$tool" thunderbolt frob
expect "attach with a bad name: usage error" 1 'cannot be an RDMA device name' \
	"$tool" attach lo 'bad%d'

# --- module not loaded, no such netdev ----------------------------------------
empty=$tmp/empty
mkdir -p "$empty/sys/module"
export TBRDMA_SYSFS_ROOT=$empty
expect "status without the module: exit 3" 3 'module is not loaded' "$tool" status
expect "status --json without the module: exit 3" 3 'module is not loaded' \
	"$tool" status --json
if [[ -z $("$tool" status --json 2>/dev/null) ]]; then
	ok "no half JSON document on error"
else
	not_ok "no half JSON document on error" "$("$tool" status --json 2>/dev/null)"
fi
expect "stats without the module: exit 3" 3 'module is not loaded' "$tool" stats
expect "detach without the module: exit 3" 3 'module is not loaded' "$tool" detach tbr0
expect "attach to a netdev that does not exist: exit 2" 2 \
	'no network interface named tbrnx9' "$tool" attach tbrnx9
unset TBRDMA_SYSFS_ROOT

# --- a fake sysfs tree: a TB5 domain with one slow link ------------------------
fake=$tmp/fake
source "$top/tests/host/lib-fake-tbt.sh"
fake_tbt_link "$fake" 0 0-1 4 "40.0 Gb/s" 2 "40.0 Gb/s" 2 thunderbolt0
fake_tbt_link "$fake" 0 0-3 4 "20.0 Gb/s" 2 "20.0 Gb/s" 2 thunderbolt1
mkdir -p "$fake/sys/module/tbrdma/parameters"
echo N >"$fake/sys/module/tbrdma/parameters/thunderbolt_attach"
etc=$tmp/etcroot
mkdir -p "$etc/etc"
export TBRDMA_SYSFS_ROOT=$fake TBRDMA_ETC_ROOT=$etc

json=$("$tool" thunderbolt status --json 2>"$tmp/err")
rc=$?
if [[ $rc -eq 0 ]] && python3 - "$json" <<'EOF'
import json, sys
s = json.loads(sys.argv[1])
links = {l["netdev"]: l for l in s["links"]}
assert sorted(links) == ["thunderbolt0", "thunderbolt1"], links
assert s["module_loaded"] is True and s["running"] is False, s
assert s["persisted"] is None and s["enabled"] is False, s
fast, slow = links["thunderbolt0"]["link"], links["thunderbolt1"]["link"]
assert fast["generation"] == 4 and fast["rx"] == {"lanes": 2, "gbps_per_lane": 40.0}, fast
assert fast["below_capability"] is False and fast["warnings"] == [], fast
assert slow["xdomain"] == "0-3" and slow["router"] == "0-0" and slow["domain"] == "domain0", slow
assert slow["remote_name"] == "node-0-3", slow
assert slow["expected_gbps_per_lane"] == 40.0 and slow["below_capability"] is True, slow
assert len(slow["warnings"]) == 1 and "40 Gb/s" in slow["warnings"][0], slow
EOF
then
	ok "thunderbolt status --json on a fake tree: both links, the slow one warned about"
else
	not_ok "thunderbolt status --json on a fake tree: both links, the slow one warned about" \
		"exit $rc" "$json" "$(cat "$tmp/err")"
fi
expect "thunderbolt status text: a WARNING for thunderbolt1 only" 0 \
	'WARNING +Thunderbolt link 0-3 \(thunderbolt1\) runs at 20 Gb/s per lane' \
	"$tool" thunderbolt status
if [[ $("$tool" thunderbolt status | grep -c WARNING) -eq 1 ]]; then
	ok "exactly one warning"
else
	not_ok "exactly one warning" "$("$tool" thunderbolt status)"
fi

# --- the opt-in: saved and applied --------------------------------------------
conf=$etc/etc/modprobe.d/tbrdma.conf
param=$fake/sys/module/tbrdma/parameters/thunderbolt_attach
expect "thunderbolt enable" 0 'saved: options tbrdma thunderbolt_attach=1' \
	"$tool" thunderbolt enable
if grep -qx 'options tbrdma thunderbolt_attach=1' "$conf" && [[ $(<"$param") == Y ]]; then
	ok "enable: saved in modprobe.d and Y written to the module parameter"
else
	not_ok "enable: saved in modprobe.d and Y written to the module parameter" \
		"$(cat "$conf" 2>&1)" "param: $(<"$param")"
fi
if python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["enabled"] and s["persisted"] and s["running"], s' \
	< <("$tool" --json thunderbolt status); then
	ok "status after enable: enabled, saved, running (--json before the command)"
else
	not_ok "status after enable: enabled, saved, running (--json before the command)"
fi
echo 'options tbrdma thunderbolt_attach=1' >"$etc/etc/modprobe.d/zz-local.conf"
expect "disable warns about a later file that overrides it" 0 \
	'zz-local.conf sets thunderbolt_attach=1 and wins' "$tool" thunderbolt disable
rm "$etc/etc/modprobe.d/zz-local.conf"
if grep -qx 'options tbrdma thunderbolt_attach=0' "$conf" &&
	! grep -q 'thunderbolt_attach=1' "$conf" && [[ $(<"$param") == N ]]; then
	ok "disable: =0 saved, the =1 line gone, N written"
else
	not_ok "disable: =0 saved, the =1 line gone, N written" "$(cat "$conf")"
fi
rm -r "$fake/sys/module/tbrdma"
expect "enable with the module not loaded: saved for later" 0 \
	'applies when it loads' "$tool" thunderbolt enable
mkdir -p "$fake/sys/module/tbrdma"
expect "enable with a module lacking the parameter: exit 5" 5 \
	'has no thunderbolt_attach parameter' "$tool" thunderbolt enable
expect "disable with a module lacking the parameter: fine" 0 '' \
	"$tool" thunderbolt disable
TBRDMA_ETC_ROOT=$tmp/nowhere expect "enable with no /etc under the root: exit 5" 5 \
	'writing .*nowhere/etc/modprobe.d/tbrdma.conf' "$tool" thunderbolt enable

# Not root: nobody may read the tree but not write /etc.
chmod 755 "$tmp" "$etc" "$etc/etc" "$etc/etc/modprobe.d"
chmod -R a+rX "$fake"
if command -v setpriv >/dev/null && [[ $(id -u) -eq 0 ]]; then
	expect "thunderbolt enable as nobody: exit 4" 4 'permission denied' \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		env TBRDMA_SYSFS_ROOT="$fake" TBRDMA_ETC_ROOT="$etc" "$tool" thunderbolt enable
	expect "thunderbolt status as nobody: fine" 0 'Thunderbolt auto-attach' \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		env TBRDMA_SYSFS_ROOT="$fake" TBRDMA_ETC_ROOT="$etc" "$tool" thunderbolt status
else
	n=$((n + 1)); echo "ok $n # SKIP not root or no setpriv"
	n=$((n + 1)); echo "ok $n # SKIP not root or no setpriv"
fi
unset TBRDMA_SYSFS_ROOT TBRDMA_ETC_ROOT

# --- the man page ---------------------------------------------------------------
if command -v man >/dev/null; then
	warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$top/Documentation/tbrdma.8" 2>&1 >/dev/null)
	if [[ -z $warnings ]]; then
		ok "tbrdma.8 renders without groff warnings"
	else
		not_ok "tbrdma.8 renders without groff warnings" "$warnings"
	fi
else
	n=$((n + 1)); echo "ok $n # SKIP man not installed"
fi
if grep -q "^\.TH TBRDMA 8 .* \"tbrdma $version\"" "$top/Documentation/tbrdma.8"; then
	ok "tbrdma.8 carries dkms.conf's version $version"
else
	not_ok "tbrdma.8 carries dkms.conf's version $version" "$(grep '^\.TH' "$top/Documentation/tbrdma.8")"
fi

tap_done
