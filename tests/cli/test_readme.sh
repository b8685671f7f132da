# README.md, section "Usage": every example command whose output does not
# depend on the terminal width (md, json and csv reports, exports and the
# greps over them) prints exactly the lines the README shows. Text reports
# are left out: the README shows them at 150 columns.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
[ -r "$KPT_SRC/tests/data/collector_app.kpt" ] || skip "tests/data recordings are missing"

# The commands run in a scratch folder where tests/ is the source tree's, so
# the README's relative paths resolve and trace.json lands in the scratch.
mkdir "$T/wd" && ln -s "$KPT_SRC/tests" "$T/wd/tests" || fail "cannot make the scratch folder"
python3 - "$KPT_SRC/README.md" "$KPTPROF" "$T/wd" <<'PY' || fail "README.md examples differ from what kptprof prints"
import os, re, shlex, subprocess, sys
readme, kptprof, wd = sys.argv[1:]
lines = open(readme).read().split("\n")
start = lines.index("## Usage")
end = next(i for i in range(start, len(lines)) if lines[i].startswith("### "))
checked, bad, in_block, i = 0, 0, False, start
while i < end:
    line = lines[i]
    i += 1
    if line.startswith("```"):
        in_block = not in_block
        continue
    if not (in_block and line.startswith("$ ")):
        continue
    cmd = line[2:]
    j = i
    while not lines[j].startswith(("$ ", "```")):
        j += 1
    want, i = lines[i:j], j
    if re.match(r"kptprof report ", cmd) and "--format" not in cmd:
        continue
    shell = re.sub(r"(^|\| )kptprof ", lambda m: m.group(1) + shlex.quote(kptprof) + " ", cmd)
    res = subprocess.run(["bash", "-c", "set -o pipefail; " + shell], cwd=wd, capture_output=True, text=True,
                         env=dict(os.environ, NO_COLOR="1"), stdin=subprocess.DEVNULL)
    got = res.stdout.split("\n")
    if got[-1] == "":
        got.pop()
    checked += 1
    if res.returncode != 0 or got != want:
        bad += 1
        print("README: '%s' (exit %d) prints:\n%s\nbut the README shows:\n%s" %
              (cmd, res.returncode, "\n".join(got), "\n".join(want)), file=sys.stderr)
if checked < 5:
    sys.exit("only %d README commands found; the Usage section changed shape" % checked)
print("%d README commands checked" % checked)
sys.exit(1 if bad else 0)
PY
exit 0
