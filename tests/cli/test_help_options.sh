# Every command's options, as the binary reports them: --help has one line
# per option with its meaning and default; `kptprof help CMD` prints the
# same; the man page and the bash completion (generated from the same option
# tables) name the same options; every command refuses an unknown option
# with one line and exit 2. docs/cli.md's option lists are generated from
# the same tables: test_cli_docs.sh checks them.
. "$KPT_SRC/tests/cli/cli_lib.sh"

run "$KPTPROF" help
expect_rc 0 "help"
cmds=$(sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' "$T/out")
[ "$(echo "$cmds" | wc -w)" -ge 14 ] || fail "'kptprof help' lists too few commands: $cmds"

run "$KPTPROF" help --completion bash
expect_rc 0 "help --completion bash"
cp "$T/out" "$T/completion.bash"
bash -n "$T/completion.bash" || fail "the bash completion does not parse"
run "$KPTPROF" help --completion zsh
expect_rc 0 "help --completion zsh"
head -n1 "$T/out" | grep -qx '#compdef kptprof' || fail "zsh completion lacks #compdef: $(head -n1 "$T/out")"
cp "$T/out" "$T/completion.zsh"

# complete WORDS...: what bash completes for the last word.
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _kptprof; echo "${COMPREPLY[*]}"' \
		sh "$T/completion.bash" "$@"
}

for c in $cmds; do
	run "$KPTPROF" "$c" --help
	expect_rc 0 "$c --help"
	[ ! -s "$T/err" ] || fail "$c --help wrote to stderr: $(cat "$T/err")"
	head -n1 "$T/out" | grep -q "^usage: kptprof $c" || fail "$c --help lost its usage line: $(head -n1 "$T/out")"
	cp "$T/out" "$T/help.$c"
	run "$KPTPROF" help "$c"
	expect_rc 0 "help $c"
	cmp -s "$T/out" "$T/help.$c" || fail "'kptprof help $c' differs from '$c --help': $(diff "$T/help.$c" "$T/out")"

	# piped, --help is wrapped to 80 columns
	long=$(awk 'length($0) > 80' "$T/help.$c")
	[ -z "$long" ] || fail "$c --help has lines over 80 columns: $long"
	# the option lines: "  -o, --output FILE   meaning (default D)", its
	# wrapped continuation lines (indented under the meaning) joined
	sed -n '/^options:$/,$p' "$T/help.$c" >"$T/opts.$c"
	help_lines "$T/opts.$c" | grep -E '^  -' >"$T/lines.$c" || true
	grep -qE -- '^  -h, --help  +show this help$' "$T/lines.$c" || fail "$c --help lacks -h, --help: $(cat "$T/help.$c")"
	# one awk over the lines: a meaning each; a default for each option with a value
	bad=$(awk '
		!/^  [^ ].*[^ ]  +[A-Za-z'"'"'].*[^ ]/ { print "no meaning: " $0; next }
		/^  -h, --help/ || /^  -- / || /^  --json/ { next }
		/^  (-[a-z], )?--[a-z-]+(\[|,| [^ ]*[A-Z|])/ && !/(\(|; )(default|required|exactly one)/ { print "no default: " $0 }
	' "$T/lines.$c")
	[ -z "$bad" ] || fail "$c --help: $bad"
	helpopts=$(grep -oE -- '^  (-[a-zA-Z], )?--?[a-z][a-z-]*' "$T/lines.$c" | sed 's/^  //; s/,//' | tr ' ' '\n' | sort -u)

	# the completion offers exactly the options --help lists
	compopts=$(complete_words kptprof "$c" - | tr ' ' '\n' | grep -v -- '^--$' | sort -u)
	[ "$compopts" = "$helpopts" ] ||
		fail "$c: bash completion and --help differ: $(diff <(echo "$compopts") <(echo "$helpopts") | tr '\n' ' ')"

	# the man page: valid roff (no groff warning), every option of --help
	run "$KPTPROF" help --man "$c"
	expect_rc 0 "help --man $c"
	head -n1 "$T/out" | grep -q '^\.TH KPTPROF\\-' || fail "man $c: no .TH line: $(head -n1 "$T/out")"
	cp "$T/out" "$T/man.$c"
	if command -v groff >/dev/null; then
		warn=$(groff -man -Tutf8 -ww -z "$T/man.$c" 2>&1) || fail "groff failed on the man page of $c"
		[ -z "$warn" ] || fail "groff warns on the man page of $c: $warn"
	fi
	# every option of --help in the man page ("\fB\-\-opt" or ", \-\-opt")
	missing=$(for o in $helpopts; do echo "$o"; done | sed 's/-/\\-/g' | while IFS= read -r o; do
		grep -qF -- "$o" "$T/man.$c" || echo "$o"; done)
	[ -z "$missing" ] || fail "man page of $c lacks: $missing"

	# an unknown option is one line and exit 2
	case $c in baseline) verb=list ;; history) verb=ls ;; *) verb= ;; esac
	run "$KPTPROF" "$c" $verb --no-such-option
	expect_error "$c --no-such-option" "'--no-such-option'"
	expect_err "unknown"
done

# "did you mean" for a near miss, of an option and of a command
run "$KPTPROF" report --fromat json x.kpt
expect_error "report --fromat" "unknown option '--fromat'"
expect_err "did you mean '--format'?"
run "$KPTPROF" histroy
expect_error "histroy" "unknown command 'histroy'"
expect_err "did you mean 'kptprof history'?"
# and of a verb: the verbs are rows of the option tables
run "$KPTPROF" history lsit
expect_error "history lsit" "unknown verb 'lsit'"
expect_err "did you mean 'kptprof history ls'?"
run "$KPTPROF" baseline lisst
expect_error "baseline lisst" "unknown verb 'lisst'"
expect_err "did you mean 'kptprof baseline list'?"
run "$KPTPROF" history zzz
expect_error "history zzz" "unknown verb 'zzz'"
expect_err "the verbs of 'history': add, ls, show, plot, detect"
run "$KPTPROF" version --bogus
expect_error "version --bogus" "unknown option '--bogus'"
run "$KPTPROF" version extra
expect_error "version extra" "takes no arguments"

# `ls` and `list` are one verb, for baseline and history alike
run "$KPTPROF" baseline list --baselines "$KPT_SRC/baselines"
expect_rc 0 "baseline list"
cp "$T/out" "$T/bl.list"
run "$KPTPROF" baseline ls --baselines "$KPT_SRC/baselines"
expect_rc 0 "baseline ls"
cmp -s "$T/out" "$T/bl.list" || fail "baseline ls differs from baseline list"
run "$KPTPROF" history ls --db "$T/none.db"
cp "$T/err" "$T/h.ls"
run "$KPTPROF" history list --db "$T/none.db"
cmp -s "$T/err" "$T/h.ls" || fail "history list differs from history ls: $(cat "$T/err")"
grep -q "needs a FILE" "$T/h.ls" && fail "history ls taken for another verb: $(cat "$T/h.ls")"
run "$KPTPROF" history add --db "$T/none.db"
expect_error "history add without FILE" "'history add' needs a FILE"

# completion of commands and of choice values
[ "$(complete_words kptprof rep)" = report ] || fail "completion of 'rep': $(complete_words kptprof rep)"
[ "$(complete_words kptprof report --by '')" = "kernel range rank" ] ||
	fail "completion of report --by: $(complete_words kptprof report --by '')"

# completion of the verbs of baseline and history, then of that verb's options
[ "$(complete_words kptprof history '')" = "add ls show plot detect" ] ||
	fail "completion of 'history ': $(complete_words kptprof history '')"
[ "$(complete_words kptprof baseline '')" = "list show update path" ] ||
	fail "completion of 'baseline ': $(complete_words kptprof baseline '')"
[ "$(complete_words kptprof baseline update --)" = "--baselines --project --suite --keep --help" ] ||
	fail "completion of 'baseline update --': $(complete_words kptprof baseline update --)"
[ "$(complete_words kptprof history list --la)" = "--last" ] ||
	fail "completion of 'history list --la': $(complete_words kptprof history list --la)"

# kptprof(1) lists every command's page
run "$KPTPROF" help --man
expect_rc 0 "help --man"
for c in $cmds; do
	grep -qF -- "\\fBkptprof\\-$c\\fR(1)" "$T/out" || fail "kptprof(1) does not list kptprof-$c(1)"
done

# The documented defaults are the analyzer's (analyzer/diff/kpt_diff.c
# fill_defaults); diff and gate share one table.
for c in diff gate; do
	grep -Eq -- '^  --threshold PCT .*\(default 2\)$' "$T/lines.$c" || fail "$c: --threshold default"
	grep -Eq -- '^  --short-threshold PCT .*10 us.*\(default 5\)$' "$T/lines.$c" || fail "$c: --short-threshold default"
	grep -Eq -- '^  --long-threshold PCT .*200 us.*\(default 1\)$' "$T/lines.$c" || fail "$c: --long-threshold default"
	grep -Eq -- '^  --alpha A .*\(default 0\.05\)$' "$T/lines.$c" || fail "$c: --alpha default"
done
grep -Eq -- '^  --runs M .*\(default 5\)$' "$T/lines.gate" || fail "gate: --runs default"
grep -Eq -- '^  --runs M .*\(default 1; a project: its runs, else 5\)$' "$T/lines.record" || fail "record: --runs default"
grep -Eq -- '^  -o, --output FILE .*\(default kptprof\.kpt; a project: PROJECT\.kpt\)$' "$T/lines.record" || fail "record: -o default"
grep -qF "'kernel' alone costs what CUPTI's own kernel activity costs (~9% on an H200), sync adds ~17%, memcpy, memset ~1% (default: kernel for -- CMD, all for suites)" "$T/lines.record" || fail "record: --kinds cost note"
# record --help also lists the counter sets (from the counters table)
grep -Eq '^  default +time' "$T/help.record" || fail "record --help lacks the counter sets"
exit 0
