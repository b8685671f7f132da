#!/usr/bin/env bash
# test_layers.sh - the floors of docs/architecture.md hold: no folder calls
# one above it, and no two modules call each other round a circle.
#
#   1. includes: each "..." include of a file in a library folder names a
#      header of its own folder or of one it may call (table below);
#   2. include cycles: the header graph has none (tsort);
#   2b. the collector backend rule: only the CUPTI backend, collectors/cupti/,
#      includes a CUPTI header (<cupti*.h>, <generated_*_meta.h>, <nvperf*.h>)
#      or, in collectors/, the CUDA driver's <cuda.h>, and no file outside
#      it includes one of its headers: the core (kpt_inject_core.c,
#      kpt_inject_trace.c) reaches the backend only through struct
#      kpt_backend_ops (kpt_inject_core.h);
#   3. calls: from the built static libraries (nm), an object calls
#      functions only of its own folder or of one it may call, and the
#      call graph between the analyzer's objects has no cycle. Only calls count: an ops
#      table's registry points at its kinds' tables (data), and those kinds
#      call back into the helpers beside the registry; that is no circle.
#
# Environment: KPT_SRC (source tree), KPT_BUILD (build tree; without it, or
# without the libraries, part 3 is skipped with a line). Exit 0 or 1, each
# violation on one line. About a second.
set -uo pipefail
SRC=${KPT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${KPT_BUILD:-}
cd "$SRC" || exit 2

# folder -> the folders it may include or call (itself included)
declare -A may=(
	[lib]="lib"
	[analyzer/diff]="analyzer/diff lib"
	[analyzer/history]="analyzer/history analyzer/diff lib"
	[analyzer/baseline]="analyzer/baseline analyzer/history analyzer/diff lib"
	[viewer]="viewer analyzer/baseline analyzer/diff analyzer/history lib"
	[cli]="cli viewer analyzer/baseline analyzer/diff analyzer/history collectors lib"
	[collectors]="collectors lib"
	[kernels]="kernels lib"
)
fail=0
bad() {
	echo "test_layers: $*"
	fail=1
}

# file name -> its path and its library folder (file names are unique)
declare -A home=() fold=()
folder_of() { # path -> REPLY: its library folder, "" for none
	local d=${1%/*}
	REPLY=""
	while [ -n "$d" ]; do
		[ -n "${may[$d]+x}" ] && { REPLY=$d; return; }
		[ "$d" = "${d%/*}" ] && return
		d=${d%/*}
	done
}
files=()
while IFS= read -r f; do
	files+=("$f")
	home[${f##*/}]=${f%/*}
	folder_of "$f"
	fold[${f##*/}]=$REPLY
done < <(git ls-files -co --exclude-standard -- 'lib/*' 'analyzer/*' 'viewer/*' 'cli/*' 'collectors/*' 'kernels/*' |
	grep -E '\.(c|h|cu|cuh)$')
allowed() { # from to
	local f
	for f in ${may[$1]}; do
		[ "$f" = "$2" ] && return 0
	done
	return 1
}

# ---- 1, 2: includes ---------------------------------------------------------
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
while read -r path inc; do
	file=${path##*/}
	inc=${inc##*/}
	[ -n "${home[$inc]+x}" ] || continue # system, CUDA, generated
	from=${fold[$file]} to=${fold[$inc]}
	allowed "$from" "$to" || bad "$path includes $inc ($to): $from may include only ${may[$from]}"
	case $file in *.h | *.cuh) echo "$file $inc" >>"$edges" ;; esac
done < <(awk 'match($0, /^[ \t]*#[ \t]*include[ \t]*"[^"]*"/) {
	s = substr($0, RSTART, RLENGTH); sub(/^[^"]*"/, "", s); sub(/"$/, "", s); print FILENAME, s }' "${files[@]}")
if ! out=$(tsort "$edges" 2>&1 >/dev/null) || [ -n "$out" ]; then
	bad "headers include each other round a circle:"
	echo "$out" | sed 's/^/  /'
fi

# ---- 2b: CUPTI only in the CUPTI backend ---------------------------------------
while IFS=: read -r path line; do
	case $path in collectors/cupti/*) continue ;; esac
	bad "$path includes ${line#*#include } outside the CUPTI backend (collectors/cupti/): reach it through struct kpt_backend_ops"
done < <(grep -HE '^[ \t]*#[ \t]*include[ \t]*<(cupti[^>]*|generated_[^>]*_meta|nvperf[^>]*)\.h>' "${files[@]}"
	grep -HE '^[ \t]*#[ \t]*include[ \t]*<cuda\.h>' $(printf '%s\n' "${files[@]}" | grep '^collectors/'))
for f in "${files[@]}"; do
	case $f in collectors/cupti/*) continue ;; esac
	while read -r inc; do
		inc=${inc##*/}
		[ "${home[$inc]:-}" = collectors/cupti ] &&
			bad "$f includes $inc of the CUPTI backend: reach it through struct kpt_backend_ops"
	done < <(sed -nE 's/^[ \t]*#[ \t]*include[ \t]*"([^"]*)".*/\1/p' "$f")
done

# ---- 3: calls between objects ----------------------------------------------
if [ -z "$BUILD" ]; then
	echo "test_layers: KPT_BUILD unset: calls not checked"
	exit $fail
fi
libs=()
for l in lib/libkpt.a analyzer/libkptanalyzer.a viewer/libkptviewer.a; do
	[ -f "$BUILD/$l" ] && libs+=("$BUILD/$l")
done
if [ ${#libs[@]} -lt 2 ]; then
	echo "test_layers: libkpt.a or libkptanalyzer.a not built under $BUILD: calls not checked"
	exit $fail
fi
# "D object function" for each function defined, "U object symbol" per use
syms=$(nm -A "${libs[@]}" 2>/dev/null | awk '{
	split($1, p, ":"); o = p[2]; sub(/\.o$/, "", o)
	if ($2 == "T") print "D", o, $3
	else if ($2 == "U") print "U", o, $3
}')
calls=$(echo "$syms" | awk '$1 == "D" { def[$3] = $2 } $1 == "U" { use[++n] = $2 " " $3 }
	END { for (i = 1; i <= n; i++) { split(use[i], u, " ");
		if ((u[2] in def) && def[u[2]] != u[1]) print u[1], def[u[2]], u[2] } }' | sort -u)
inner=""
while read -r a b fn; do
	[ -n "$a" ] || continue
	fa=${fold[$a]:-} fb=${fold[$b]:-}
	[ -n "$fa" ] && [ -n "$fb" ] || continue
	allowed "$fa" "$fb" || bad "${home[$a]}/$a calls $fn of ${home[$b]}/$b: $fa may call only ${may[$fa]}"
	case "$fa $fb" in analyzer/*" "analyzer/*) inner+="$a $b"$'\n' ;; esac
done <<<"$calls"
# cycles: among the analyzer's objects (lib's importers and their registry
# call each other: not checked yet)
if ! out=$(printf '%s' "$inner" | sort -u | tsort 2>&1 >/dev/null) || [ -n "$out" ]; then
	bad "objects call each other round a circle (tsort names its members):"
	echo "$out" | awk '!seen[$0]++ { print "  " $0 }'
fi
exit $fail
