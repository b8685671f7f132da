# cmake --install into a temporary prefix, then the installed kptprof, run
# from a folder with no ./baselines: report, diff, gate --from against the
# installed baselines (<prefix>/share/kptprof/baselines), its man pages and
# completion; the collector and kpt-workloads under <prefix>/lib/kptprof
# when the build has them.
. "$KPT_SRC/tests/cli/cli_lib.sh"
command -v cmake >/dev/null || skip "cmake is not installed"

P=$T/prefix
cmake --install "$KPT_BUILD" --prefix "$P" >"$T/install.log" 2>&1 ||
	fail "cmake --install failed: $(tail -n 5 "$T/install.log")"
K=$P/bin/kptprof
[ -x "$K" ] || fail "no $K after cmake --install"
for f in share/man/man1/kptprof.1 share/man/man1/kptprof-report.1 share/man/man1/kptprof-gate.1 \
	share/man/man1/kptprof-history.1 share/bash-completion/completions/kptprof \
	share/zsh/site-functions/_kptprof; do
	[ -s "$P/$f" ] || fail "cmake --install did not install $f: $(ls -R "$P" | head -40)"
done
# the baselines' folders of sessions install too (default and seed of each GPU model)
for g in nvidia-h100-80gb-hbm3 nvidia-h200; do
	for s in default seed; do
		ls "$P"/share/kptprof/baselines/$g/$s/*.kpt >/dev/null 2>&1 ||
			fail "cmake --install did not install the $g $s sessions"
	done
done
n=$(ls "$P/share/man/man1" | wc -l)
cmds=$("$K" help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' | wc -l)
[ "$n" = $((cmds + 1)) ] || fail "expected kptprof.1 and $cmds command pages, got $n: $(ls "$P/share/man/man1")"
# the installed pages are what the binary prints
"$K" help --man diff | cmp -s - "$P/share/man/man1/kptprof-diff.1" || fail "installed kptprof-diff.1 differs from 'help --man diff'"
if [ -x "$KPT_BUILD/collectors/libkptinject.so" ] || [ -f "$KPT_BUILD/collectors/libkptinject.so" ]; then
	[ -f "$P/lib/kptprof/libkptinject.so" ] || fail "the collector was built but not installed"
fi
if [ -x "$KPT_BUILD/cli/kpt-workloads" ]; then
	[ -x "$P/lib/kptprof/kpt-workloads" ] || fail "kpt-workloads was built but not installed"
	# the installed kptprof finds its own runner, not the build tree's
	run env -u KPTPROF_WORKLOADS -u KPT_WORKLOADS "$K" workloads --suite quick
	expect_rc 0 "installed workloads"
	expect_out "memory.copy"
fi

mkdir "$T/work" && cd "$T/work" || fail "cannot make a work folder"
unset KPTPROF_BASELINES KPT_BASELINES

run "$K" report "$KPT_DATA/collector_app.kpt"
expect_rc 0 "installed report"
expect_out "kpt_t_empty()"

run "$K" diff "$KPT_DATA/ab_h100_aa_a.kpt" "$KPT_DATA/ab_h100_aa_b.kpt" -q --json "$T/d.json"
expect_rc 0 "installed diff of an A/A pair"
grep -q '"result": *"ok"\|"result":"ok"' "$T/d.json" || fail "installed diff: JSON result is not ok: $(head -c 300 "$T/d.json")"

# gate --from: the baseline comes from the installed share/kptprof/baselines
run "$K" baseline path --gpu nvidia-h100-80gb-hbm3 --suite default
expect_rc 0 "installed baseline path"
case $(cat "$T/out") in "$P"/bin/../share/kptprof/baselines/* | "$P"/share/kptprof/baselines/*) ;;
*) fail "the installed kptprof does not use its installed baselines: $(cat "$T/out")" ;; esac
run "$K" gate --from "$KPT_DATA/heldout_h100_s11_plant.kpt" --suite default -q --json "$T/g.json"
expect_rc 1 "installed gate --from a planted slowdown"
grep -q 'memory.copy.128MiB' "$T/g.json" || fail "installed gate: the planted key is not in the report"
# ./baselines, when present, comes first
mkdir -p baselines
run "$K" gate --from "$KPT_DATA/heldout_h100_s11_plant.kpt" --suite default -q
expect_rc 2 "gate with an empty ./baselines"

# the installed completion completes
bash -c '. "$1"; COMP_WORDS=(kptprof gate --fr); COMP_CWORD=2; _kptprof; echo "${COMPREPLY[*]}"' sh \
	"$P/share/bash-completion/completions/kptprof" >"$T/comp" || fail "the installed bash completion fails"
grep -qx -- '--from' "$T/comp" || fail "installed completion of 'gate --fr': $(cat "$T/comp")"
if command -v man >/dev/null; then
	MANPATH=$P/share/man man -w kptprof-gate >"$T/manw" 2>&1 || fail "man does not find kptprof-gate: $(cat "$T/manw")"
fi
exit 0
