#!/usr/bin/env bash
# examples/cuda-project stays honest without a GPU: its kptprof.json has
# only the keys lib/kpt_project.h documents, with values of the right kinds
# (a capture window inside the program's steps, an NVTX range the program
# opens), and kptprof reads it (where it has record --project);
# plant/slow.patch and plant/noop.patch apply to it (noop changes comment
# lines only); and, where nvcc is installed, the project configures and
# builds for sm_90 with and without slow.patch and the program parses its
# options. Skips (77) after the file and patch checks when there is no
# nvcc (the build was not checked).
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
command -v git >/dev/null || skip "git is not installed"
EX=$KPT_SRC/examples/cuda-project
[ -f "$EX/kptprof.json" ] || fail "no examples/cuda-project/kptprof.json"

# 1. The project file against the header's format.
cat >"$T/check.py" <<'EOF'
import json, re, sys
path, header, source = sys.argv[1:4]
TOP = {"project", "build", "baselines", "db", "runs", "workloads"}
WORKLOAD = {"name", "command", "env", "cwd", "timeout", "capture", "runs", "warmup"}
CAPTURE = {"nvtx", "steps", "every", "cudaProfilerApi"}
COMPONENT = re.compile(r"^[a-z0-9_-][a-z0-9._-]{0,127}$")
errors = []
def bad(msg):
    errors.append(msg)
# the key sets above are the header's: a key it renames or drops fails here
doc = open(header).read()
for k in sorted(TOP | WORKLOAD | CAPTURE):
    if '"%s"' % k not in doc:
        bad("lib/kpt_project.h does not document key '%s' (update this test)" % k)
def strings(v):
    return isinstance(v, list) and len(v) > 0 and all(isinstance(s, str) and s for s in v)
p = json.load(open(path))
for k in sorted(set(p) - TOP):
    bad("unknown top-level key '%s'" % k)
if not COMPONENT.match(str(p.get("project", ""))):
    bad("'project' is not a path component: %r" % p.get("project"))
if not strings(p.get("build")):
    bad("'build' is not one argv (a list of strings)")
elif p["build"][0] == "sh":
    import os
    script = os.path.join(os.path.dirname(path), p["build"][1])
    if not os.path.isfile(script):
        bad("'build' runs '%s', which is not in the example" % p["build"][1])
if not (isinstance(p.get("runs"), int) and p["runs"] >= 2):
    bad("'runs' must be an integer >= 2 (a baseline needs 2 runs)")
wls = p.get("workloads")
if not (isinstance(wls, list) and wls):
    bad("'workloads' is not a non-empty list")
    wls = []
names = set()
nvtx_opened = set(re.findall(r'nvtxRangePushA\("([^"]+)"\)', open(source).read()))
for w in wls:
    for k in sorted(set(w) - WORKLOAD):
        bad("workload: unknown key '%s'" % k)
    name = w.get("name", "")
    if not COMPONENT.match(str(name)) or name in names:
        bad("workload name %r is not a unique path component" % name)
    names.add(name)
    if not strings(w.get("command")):
        bad("workload %s: 'command' is not an argv" % name)
        continue
    cap = w.get("capture", {})
    for k in sorted(set(cap) - CAPTURE):
        bad("workload %s: unknown capture key '%s'" % (name, k))
    if "nvtx" in cap and cap["nvtx"] not in nvtx_opened:
        bad("workload %s: the program never opens the NVTX range '%s'" % (name, cap["nvtx"]))
    m = re.match(r"^(\d+)-(\d+)$", str(cap.get("steps", "")))
    if "steps" in cap:
        if not m or int(m.group(1)) > int(m.group(2)):
            bad("workload %s: steps %r is not A-B with A <= B" % (name, cap["steps"]))
        else:
            cmd = w["command"]
            total = int(cmd[cmd.index("--steps") + 1]) if "--steps" in cmd else 60
            if int(m.group(2)) >= total:
                bad("workload %s: the window ends at step %s but the program runs %d (0 to %d)"
                    % (name, m.group(2), total, total - 1))
print("\n".join(errors))
sys.exit(1 if errors else 0)
EOF
run python3 "$T/check.py" "$EX/kptprof.json" "$KPT_SRC/lib/kpt_project.h" "$EX/src/stencil_bench.cu"
[ "$RC" = 0 ] || fail "examples/cuda-project/kptprof.json: $(cat "$T/out" "$T/err")"
# ... and against kptprof's own reader, where this kptprof records
# projects: a workload it lacks is an error that lists the ones it read.
if "$KPTPROF" record --help 2>&1 | grep -- '--project' >/dev/null; then
	run "$KPTPROF" record --project "$EX/kptprof.json" --workload kpt-no-such-workload -o "$T/none.kpt"
	expect_rc 2 "record --project examples/cuda-project/kptprof.json --workload kpt-no-such-workload"
	expect_err "its workloads: steps"
fi

# 2. The pull-request-like patches apply to a copy of the example.
cp -r "$EX" "$T/p"
rm -rf "$T/p/build"
g() { git -C "$T/p" -c user.name=t -c user.email=t@t.invalid "$@"; }
{ g init -q && g add -A && g commit -qm main; } || fail "cannot make a git repository of the example"
for c in slow noop; do
	run g apply --check "$EX/plant/$c.patch"
	expect_rc 0 "git apply --check plant/$c.patch"
done
# noop changes comment lines only (lines of a /* */ block)
changed=$(sed -n '/^diff --git/,$p' "$EX/plant/noop.patch" | grep -E '^[-+]' | grep -vE '^(\+\+\+|---) ')
[ -n "$changed" ] || fail "noop.patch changes nothing"
printf '%s\n' "$changed" | grep -vqE '^[-+][[:space:]]*(/\*|\*)' && fail "noop.patch changes more than comments: $changed"
# slow changes sgemm_tiled's source only, and keeps the launch bounds that
# hold it at 64 registers
grep -q '^+++ b/src/stencil_bench.cu$' "$EX/plant/slow.patch" || fail "slow.patch does not change the kernel source"
[ "$(grep -c '^+++ ' "$EX/plant/slow.patch")" = 1 ] || fail "slow.patch changes more than one file"
grep -q '^-' <(sed -n '/^diff --git/,$p' "$EX/plant/slow.patch" | grep -v '^--- ') && fail "slow.patch removes lines"

# 3. The build, where nvcc is installed.
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$NVCC" ] || skip "no nvcc: the project file and the patches are fine, the build was not checked"
command -v cmake >/dev/null || skip "no cmake: the build was not checked"
build() {
	cmake -S "$T/p" -B "$T/p/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
		-DCMAKE_CUDA_COMPILER="$NVCC" >"$T/cmake.log" 2>&1 &&
		cmake --build "$T/p/build" -j2 >>"$T/cmake.log" 2>&1
}
build || fail "the example does not build: $(tail -20 "$T/cmake.log")"
B=$T/p/build/stencil-bench
[ -x "$B" ] || fail "the build made no stencil-bench"
run "$B" --help
expect_rc 0 "stencil-bench --help"
expect_out "--steps N"
run "$B" --gemm 100
expect_rc 2 "stencil-bench --gemm 100 (not a multiple of 64)"
expect_err "multiple of 64"
run "$B" --bogus
expect_rc 2 "stencil-bench --bogus"
g apply "$EX/plant/slow.patch" || fail "slow.patch does not apply"
build || fail "the example with slow.patch does not build: $(tail -20 "$T/cmake.log")"
echo "ok: examples/cuda-project: project file, patches and build"
exit 0
