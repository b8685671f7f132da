# The committed baselines still name this build's kernels: every kernel of
# the newest session of each baselines/<gpu>/default/ that this build defines
# (its name found among kpt-workloads' symbols, demangled) must be there with
# exactly the recorded name. A kernel whose signature or template arguments
# changed gets a new demangled name, so `kptprof gate` (the README's main
# command) would show its key as GONE and a NEW one and gate nothing for it:
# rename it back, or record the baselines again (baselines/README.md).
# Kernels of other libraries (cuBLAS's nvjet, ...) are not this build's: skipped.
. "$KPT_SRC/tests/cli/cli_lib.sh"
W="$KPT_BUILD/cli/kpt-workloads"
[ -x "$W" ] || skip "kpt-workloads is not built (no CUDA toolkit)"
command -v nm >/dev/null || skip "nm is not installed"
need_python
nm -C "$W" 2>/dev/null | sed -n 's/^[0-9a-f]* [tTwW] //p' | sed 's/ \[clone .*\]$//' | sort -u >"$T/syms"
[ -s "$T/syms" ] || skip "kpt-workloads has no symbols (stripped)"
checked=0
cut_at='[<(]*'
for dir in "$KPT_SRC"/baselines/*/default; do
	s=$(ls "$dir"/*.kpt 2>/dev/null | tail -1)
	[ -n "$s" ] || continue
	run "$KPTPROF" report --format json --top 0 "$s"
	expect_rc 0 "report of $s"
	# the kernels' demangled names; a name is this build's when a symbol has
	# its identifier (below) followed by '<' or '('
	python3 -c 'import json, sys
for k in json.load(open(sys.argv[1]))["kernels"]:
    print(k["name"])' "$T/out" | sort -u >"$T/names" || fail "no kernel names in the report of $s"
	while IFS= read -r name; do
		# the function's own identifier: no return type, no namespaces
		# (anonymous or named), nothing from its first '<' or '(' on
		id=${name#void }
		id=${id//"(anonymous namespace)::"/}
		id=${id%%$cut_at}
		id=${id##*::}
		case $id in '' | *[!A-Za-z0-9_]*) continue ;; esac
		grep -qE "(^|[ :])${id}[<(]" "$T/syms" || continue
		checked=$((checked + 1))
		grep -qxF -- "$name" "$T/syms" ||
			fail "$(basename "$(dirname "$dir")")'s baseline $(basename "$s") names '$name', which this build no longer defines"
	done <"$T/names"
done
[ "$checked" -ge 5 ] || fail "only $checked baseline kernels were this build's: the check found nothing to check"
echo "$checked baseline kernel names found in kpt-workloads"
exit 0
