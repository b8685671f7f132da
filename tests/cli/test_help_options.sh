# --help of record, diff, gate, baseline and view: one line per option the
# command parses ("  --opt V   meaning (default D)"), the option names read
# from the parsers as well as listed here, so an option added without its
# help line fails; and `kptprof help CMD` prints exactly what
# `kptprof CMD --help` does.
. "$KPT_SRC/tests/cli/cli_lib.sh"

# Option names in a C array initialiser: the strings of lines between
# "$2" and the closing "};" (or ")" of one line), that start with '-'.
names_in() { sed -n "/$2/,/^[[:space:]]*};\{0,1\}\$/p" "$KPT_SRC/cli/$1" | grep -o '"-[^"]*"' | tr -d '"'; }
diff_table=$(names_in cmd_diff.c 'diff_opts\[\] = {')
[ "$(echo "$diff_table" | wc -w)" -ge 15 ] || fail "found too few diff options in cli/cmd_diff.c: $diff_table"

opts_record="-o --output --runs --iterations --warmup --cold --counters --api --kinds --suite --workload
	--capture-range --steps --every --delay --duration
	$(grep -o 'str[n]*cmp(a, "-[^"=]*' "$KPT_SRC/cli/cmd_record.c" | sed 's/.*"//' | grep -vx -- '--')
	$(grep -o 'kpt_cli_opt(argc, argv, &i, "[^"]*"' "$KPT_SRC/cli/cmd_record.c" | sed 's/.*"\(.*\)"/\1/')"
opts_diff="--threshold --short-threshold --long-threshold --alpha --junit --markdown --json --plots --suite-name
	--force --all --quiet -q --welch --keep-throttled --base-runs --new-runs --method $diff_table"
opts_gate="--suite --baselines --runs -o --from --plots $diff_table
	$(sed -n '/names\[\] = { "--suite"/,/};/p' "$KPT_SRC/cli/cmd_gate.c" | grep -o '"-[^"]*"' | tr -d '"')"
opts_baseline="--baselines --suite --gpu --from $(names_in cmd_baseline.c 'names\[\] = {')"
opts_view="-o --output --baseline --width --top --trace-max --trace-all --trace-bytes --no-gnuplot --threshold --short-threshold
	--long-threshold --alpha --force --welch --keep-throttled --base-runs --new-runs --method"

for c in record diff gate baseline view; do
	run "$KPTPROF" "$c" --help
	expect_rc 0 "$c --help"
	[ ! -s "$T/err" ] || fail "$c --help wrote to stderr: $(cat "$T/err")"
	head -n1 "$T/out" | grep -q "^usage: kptprof $c " || fail "$c --help lost its usage line: $(head -n1 "$T/out")"
	grep -qx "options:" "$T/out" || fail "$c --help has no options section: $(cat "$T/out")"
	cp "$T/out" "$T/help.$c"
	eval "opts=\$opts_$c"
	for o in $opts -h --help; do
		line=$(grep -m1 -E -- "^  (-[a-z], )?$o( |,|\[)" "$T/help.$c") ||
			fail "$c --help does not list $o: $(cat "$T/help.$c")"
		echo "$line" | grep -Eq -- "^  \S.*\S  +[A-Za-z'].*\S" || fail "$c --help: '$o' line has no meaning: $line"
		case $o in -h | --help) continue ;; esac
		echo "$line" | grep -Eq "(\(|; )(default|required|exactly one)" ||
			fail "$c --help: '$o' line gives no default: $line"
	done
	run "$KPTPROF" help "$c"
	expect_rc 0 "help $c"
	cmp -s "$T/out" "$T/help.$c" || fail "'kptprof help $c' differs from '$c --help': $(diff "$T/help.$c" "$T/out")"
done

# The documented defaults are the analyzer's (analyzer/kpt_diff.c
# fill_defaults); diff and gate share one text.
for c in diff gate; do
	grep -Eq -- '^  --threshold PCT .*\(default 2\)$' "$T/help.$c" || fail "$c: --threshold default"
	grep -Eq -- '^  --short-threshold PCT .*10 us.*\(default 5\)$' "$T/help.$c" || fail "$c: --short-threshold default"
	grep -Eq -- '^  --long-threshold PCT .*200 us.*\(default 1\)$' "$T/help.$c" || fail "$c: --long-threshold default"
	grep -Eq -- '^  --alpha A .*\(default 0\.05\)$' "$T/help.$c" || fail "$c: --alpha default"
done
grep -Eq -- '^  --runs M .*\(default 5\)$' "$T/help.gate" || fail "gate: --runs default"
grep -Eq -- '^  --runs M .*\(default 1\)$' "$T/help.record" || fail "record: --runs default"
grep -Eq -- '^  -o, --output FILE .*\(default kptprof\.kpt\)$' "$T/help.record" || fail "record: -o default"
grep -qF "on a launch-bound PyTorch step sync adds ~17%, memcpy, memset ~1% (default: kernel for -- CMD, all for suites)" "$T/help.record" || fail "record: --kinds cost note"
# record --help also lists the counter sets (from the counters table)
grep -Eq '^  default +time' "$T/help.record" || fail "record --help lacks the counter sets"
exit 0
