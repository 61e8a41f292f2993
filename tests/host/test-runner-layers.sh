#!/bin/bash
# The runner's layers (Documentation/runner.md, "Layout"): tools/runner
# drawn from its includes and calls (runner-layers.py) has no circle of
# files or of folders, no arrow that runs up against the folders' order
# below, and at least five folders. First the checker itself must fail:
# on a small tree with a circle and a call up, it has to see both.
# Prints TAP.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib-tap.sh
source "$here/lib-tap.sh"

# The folders from the bottom up. A new folder goes in here, at its floor.
layers="base kernels comm gguf text model model/arch cmd"
# Arrows allowed to run up (the issue allowed two; there are none).
max_back=0

# summary FIELD — a number from the checker's summary line in $tmp/out
summary() {
	sed -n "s/^summary: .*\b$1 \([0-9]*\).*/\1/p" "$tmp/out"
}

# A tree that breaks both rules: low/a.c and high/b.c call each other
# (a circle, and a call up from low), high/c.c includes low/a.h (fine).
mkdir -p "$tmp/bad/low" "$tmp/bad/high"
printf 'int low_fn(void);\n' >"$tmp/bad/low/a.h"
printf '#include "low/a.h"\nint high_fn(void);\nint low_fn(void) { return high_fn(); }\n' \
	>"$tmp/bad/low/a.c"
printf '#include "low/a.h"\nint high_fn(void) { return 1; }\nint high_g(void) { return low_fn(); }\n' \
	>"$tmp/bad/high/b.c"
printf '#include "low/a.h"\nint high_h(void) { return 2; }\n' >"$tmp/bad/high/c.c"
if python3 "$here/runner-layers.py" --layers "low high" "$tmp/bad" \
	>"$tmp/out" 2>&1 &&
	[ "$(summary circles)" = 1 ] && [ "$(summary folder_circles)" = 1 ] &&
	[ "$(summary back)" -ge 2 ] &&
	grep -q "back up: low/a.c -> high/b.c (call)" "$tmp/out"; then
	ok "the checker sees a circle of two files and a call up in a tree made for it"
else
	not_ok "the checker sees a circle of two files and a call up in a tree made for it" \
		"$(cat "$tmp/out")"
fi

if ! python3 "$here/runner-layers.py" --layers "$layers" "$top/tools/runner" \
	>"$tmp/out" 2>&1; then
	echo "Bail out! runner-layers.py failed: $(tail -5 "$tmp/out")"
	exit 1
fi
picture=$(grep -v '^  floor' "$tmp/out")
files=$(summary files)
if [ "$(summary circles)" = 0 ]; then
	ok "tools/runner: no circle among its $files files ($(summary arrows) arrows, $(summary floors) floors)"
else
	not_ok "tools/runner: no circle among its files" "$picture"
fi
if [ "$(summary folder_circles)" = 0 ]; then
	ok "tools/runner: no circle among its folders"
else
	not_ok "tools/runner: no circle among its folders" "$picture"
fi
back=$(summary back)
if [ "$back" -le "$max_back" ]; then
	ok "tools/runner: $back arrows run up (at most $max_back), against '$layers'"
else
	not_ok "tools/runner: at most $max_back arrows run up, against '$layers'" "$picture"
fi
folders=$(summary folders)
if [ "$(summary undeclared)" = 0 ] && [ "$folders" -ge 5 ]; then
	ok "tools/runner: $folders folders, each one a layer of '$layers'"
else
	not_ok "tools/runner: at least 5 folders, each one a layer of '$layers'" "$picture"
fi
tap_done
