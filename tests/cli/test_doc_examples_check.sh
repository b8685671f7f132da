#!/bin/bash
# The machinery behind docs.examples and the skip notes: tests/docs/check_examples.py
# fails on an example that drifts and passes the same example fixed (exact
# lines, "..." cuts, markers); KPTPROF_CHECK_ARGS parses a GPU command and
# stops before any GPU is looked for, yet still refuses a bad option;
# tests/ctest/skip-note.sh keeps the reason of a test that exits 77 and
# passes every exit status through.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
C="$KPT_SRC/tests/docs/check_examples.py"
check() { run python3 "$C" --kptprof "$KPTPROF" --src "$KPT_SRC" --build "$KPT_BUILD" "$T/doc.md"; }

# KPTPROF_CHECK_ARGS: exit 0 and nothing printed where, unset, this machine
# (no GPU) would skip with 77; a bad option is still exit 2
KPTPROF_CHECK_ARGS=1 run "$KPTPROF" gate --against main --runs 3
expect_rc 0 "gate --against under KPTPROF_CHECK_ARGS"
[ ! -s "$T/out" ] && [ ! -s "$T/err" ] || fail "KPTPROF_CHECK_ARGS printed: $(cat "$T/out" "$T/err")"
KPTPROF_CHECK_ARGS=1 run "$KPTPROF" record --runs 5 --bogus -- true
expect_error "record --bogus under KPTPROF_CHECK_ARGS" "unknown option '--bogus'"

# an exact transcript: right passes; one changed line fails and names the block
printf '%s\n' 'Text.' '' '```' '$ kptprof report nope.kpt' \
	"kptprof: cannot read 'nope.kpt': No such file or directory" '$ echo $?' '2' '```' > "$T/doc.md"
check
expect_rc 0 "a right transcript"
expect_out "2 checked exactly"
sed -i 's/^2$/0/' "$T/doc.md"
check
expect_rc 1 "a transcript that drifted"
expect_err "doc.md:3: 'echo \$?' (exit 0) prints:"

# "..." cuts lines and " ... " cuts columns; a GPU command is only parsed;
# a not-run block is counted and left alone; an sh line that fails is caught
cat > "$T/doc.md" <<'MD'
```
$ kptprof diff tests/data/copy_base.kpt tests/data/copy_plant10_512MiB.kpt
...
copy_vec(uint4*, uint4 const*, unsigned long, unsigned long) ... SLOW
...
```

```sh
kptprof record --runs 5 -o x.kpt -- python3 train.py
kptprof report tests/data/torch_small.kpt --top 1
```

<!-- example: not run: an illustration -->
```
$ kptprof record --no-such-option
```
MD
check
expect_rc 0 "cuts, a GPU line and a not-run block"
expect_out "1 checked exactly, 1 run, 1 parse only, 1 blocks not run"
sed -i 's/--top 1/--top x/' "$T/doc.md"
check
expect_rc 1 "an sh line that exits 2"
sed -i 's/--top x/--top 1/; s/--runs 5 -o x.kpt/--runz 5 -o x.kpt/' "$T/doc.md"
check
expect_rc 1 "a GPU line that does not parse"
expect_err "does not parse (exit 2)"

# skip-note.sh: exit statuses pass through; 77 leaves the last line as the note
N="$KPT_SRC/tests/ctest/skip-note.sh"
run bash "$N" "$T/skips" t.pass sh -c 'echo fine; exit 0'
expect_rc 0 "skip-note, a passing test"
expect_out fine
run bash "$N" "$T/skips" t.fail sh -c 'echo SKIP: not me; exit 1'
expect_rc 1 "skip-note, a failing test"
run bash "$N" "$T/skips" t.skip sh -c 'echo some output; echo "SKIP: frobnicator is not installed" >&2; echo; exit 77'
expect_rc 77 "skip-note, a skipped test"
[ "$(ls "$T/skips")" = t.skip ] || fail "notes for other than the skipped test: $(ls "$T/skips")"
run sh "$KPT_SRC/tests/ctest/skip-reasons.sh" "$T/skips"
expect_rc 0 "skip-reasons.sh"
[ "$(cat "$T/out")" = "Why tests were skipped:
  t.skip: SKIP: frobnicator is not installed" ] || fail "skip-reasons.sh printed: $(cat "$T/out")"
echo "ok: doc example checks and skip notes"
