# Every JSON output carries format_version and matches its JSON Schema in
# docs/schema/ (Debian's python3-jsonschema): diff --json (ok, regression,
# error), report --format json (by kernel, range, rank), compare --format
# json; and each schema rejects a document without format_version.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed"
D=$KPT_DATA

"$KPTPROF" diff "$D/ab_h100_aa_a.kpt" "$D/ab_h100_aa_b.kpt" -q --json "$T/diff-ok.json"
[ $? = 0 ] || fail "A/A diff did not exit 0"
"$KPTPROF" diff "$D/ab_h100_plant_a.kpt" "$D/ab_h100_plant_b.kpt" --paired -q --json "$T/diff-slow.json"
[ $? = 1 ] || fail "planted diff did not exit 1"
"$KPTPROF" diff "$D/ab_h100_aa_a.kpt" "$T/missing.kpt" -q --json "$T/diff-error.json" 2>/dev/null
[ $? = 2 ] || fail "diff of a missing file did not exit 2"
for by in kernel range rank; do
	"$KPTPROF" report "$D/torch_small.kpt" --by $by --format json >"$T/report-$by.json" || fail "report --by $by failed"
done
"$KPTPROF" compare "$KPT_SRC/tests/data/baselines-20261124/nvidia-h100-80gb-hbm3/seed.kpt" "$KPT_SRC/tests/data/baselines-20261124/nvidia-h200/seed.kpt" \
	--format json >"$T/compare.json" || fail "compare --format json failed"

python3 - "$KPT_SRC/docs/schema" "$T" <<'PY' || fail "a JSON output does not match its schema"
import glob, json, os, sys
import jsonschema
sdir, t = sys.argv[1:]
V = jsonschema.Draft202012Validator
schemas = {}
for p in sorted(glob.glob(os.path.join(sdir, "*.schema.json"))):
    s = json.load(open(p))
    V.check_schema(s)
    schemas[os.path.basename(p).split(".")[0]] = s
assert {"diff", "report", "compare", "devices"} <= set(schemas), sorted(schemas)
cases = [("diff", "diff-ok"), ("diff", "diff-slow"), ("diff", "diff-error"), ("report", "report-kernel"),
         ("report", "report-range"), ("report", "report-rank"), ("compare", "compare")]
for name, f in cases:
    doc = json.load(open(os.path.join(t, f + ".json")))
    errors = list(V(schemas[name]).iter_errors(doc))
    assert not errors, "%s.json vs %s: %s" % (f, name, errors[0].message)
    assert "format_version" in doc, f
    # the schema constrains: without format_version the document is refused
    del doc["format_version"]
    assert list(V(schemas[name]).iter_errors(doc)), "%s schema accepts a document without format_version" % name
assert json.load(open(os.path.join(t, "diff-slow.json")))["result"] == "regression"
assert json.load(open(os.path.join(t, "diff-error.json")))["result"] == "error"
print("validated", len(cases), "documents against", len(schemas), "schemas")
PY
exit 0
