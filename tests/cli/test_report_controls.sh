# kptprof report: control characters in a recording's meta values, device
# and kernel names reach text output as visible escapes (\e, \n, \x07,
# \u{009b}) and Markdown as U+FFFD (no ESC, no extra lines); JSON and CSV
# keep them, escaped.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
[ -x "$KPT_BUILD/kpt-ctlrec" ] || skip "kpt-ctlrec is not built"
"$KPT_BUILD/kpt-ctlrec" "$T/c.kpt" || fail "kpt-ctlrec failed"

# no_controls FILE: fails when FILE holds a byte in 0x00-0x1f other than
# newline, DEL, or a UTF-8 C1 control
no_controls() {
	python3 - "$1" <<'PY' || fail "control characters in $1: $(od -c "$1" | head -20)"
import sys
b = open(sys.argv[1], "rb").read()
bad = [c for c in b if (c < 0x20 and c != 0x0a) or c == 0x7f]
assert not bad, bad
assert b"\xc2\x9b" not in b
PY
}

run "$KPTPROF" report "$T/c.kpt"
expect_rc 0 "report text"
no_controls "$T/out"
expect_out 'command   app\e[31m --red\nrm -rf'
expect_out 'recorded  2026-11-21T00:00:00Z\r on box\e]0;title\x07'
expect_out 'suite     s\u{009b}31mc1'
expect_out 'GPU\e[2Jwiped'
expect_out 'driver 580\n.95'
expect_out 'evil\e[1;31m_kernel\nsecond\x7fline'
grep -q '^rm -rf' "$T/out" && fail "a newline in the command started a line"

run "$KPTPROF" report "$T/c.kpt" --format md
expect_rc 0 "report md"
no_controls "$T/out"
expect_out $'`evil\xef\xbf\xbd[1;31m_kernel\xef\xbf\xbdsecond\xef\xbf\xbdline`'
expect_out $'GPU\xef\xbf\xbd\\[2Jwiped'

# JSON and CSV carry the exact bytes, escaped by their own rules
run "$KPTPROF" report "$T/c.kpt" --format json
expect_rc 0 "report json"
python3 - "$T/out" <<'PY' || fail "JSON lost the exact names"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["meta"]["command"] == "app\x1b[31m --red\nrm -rf", d["meta"]
assert d["kernels"][0]["name"] == "evil\x1b[1;31m_kernel\nsecond\x7fline", d["kernels"]
PY
run "$KPTPROF" report "$T/c.kpt" --format csv
expect_rc 0 "report csv"
python3 - "$T/out" <<'PY' || fail "CSV lost the exact name"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows[0]["name"] == "evil\x1b[1;31m_kernel\nsecond\x7fline", rows
PY
exit 0
