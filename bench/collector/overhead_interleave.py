"""overhead_interleave.py - the collector overhead benchmark's rounds, with
the modes interleaved in short blocks inside each round.

  python3 overhead_interleave.py --out DIR --kptprof K --floor LIBFLOOR
         --script overhead_step.py [--modes M ...] [--rounds R]
         [--blocks B] [--steps N] [--gpu-steps N] [--budget-s S]
         [--pin CORES]

Why blocks: a launch-bound PyTorch step's time moves by several percent
from one process to the next one started seconds later (CPU placement, the
host's other tenants), which drowned a 3% effect in rounds of one process
per mode run one after another (2026-11-24: plain itself 3.53-4.06 ms over
5 rounds). Here a round starts one process per mode at once (each a real
process under its real tool: `kptprof record -- python3 ...`, torch.profiler
in the script, raw CUPTI injected), waits until all are warm, stops them all
(SIGSTOP), then runs BLOCKS blocks: in each block every mode in turn
(order rotated per block and round) is continued (SIGCONT), runs STEPS/BLOCKS
timed steps of each workload (after 2 untimed ones) and is stopped again.
So every mode's steps are taken in the same minute, on the same machine
state, and nothing of the other modes runs meanwhile (their CUPTI worker
and NVML sampler threads are stopped too). Each mode's step time in a round
is the median of its STEPS steps; rounds (fresh processes) are the unit of
the paired comparison (overhead_stats.py), so process-to-process variation
stays in the interval.

Writes DIR/raw.tsv (overhead_stats.py's input), DIR/steps.tsv (every step:
round mode workload block ms), DIR/logs/ (each process's stderr),
DIR/dropped.txt (kptprof's dropped-record warnings), DIR/recorded.txt (what
each recording holds), DIR/process_seconds.txt (start-up to ready).
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def mode_table(k, floor, k_old=None):
    rec = lambda *extra: [k, "record", *extra, "-o", "{kpt}", "--"]
    return {
        "plain": ({}, [], []),
        "kptprof": ({}, rec(), []),
        # another build's kptprof as typed (--kptprof-old: a refactor's
        # before, scripts/gpu/collector_ab.sh)
        "kptprof-old": ({}, [k_old or "/nonexistent/kptprof-old", "record", "-o", "{kpt}", "--"], []),
        "kptprof-all": ({}, rec("--kinds", "all"), []),
        # capture windows: one "step" range in 20 traced (scripts/gpu/windows.sh)
        "kptprof-every20": ({}, rec("--capture-range", "nvtx:step", "--every", "20"), []),
        # the same without the pre-roll (the step before each window untraced)
        "kptprof-every20-nopreroll": ({"KPT_PREROLL": "0"}, rec("--capture-range", "nvtx:step", "--every", "20"), []),
        # attribution of every20 (KPT_WINDOW_TEST_OFF, kpt_window.h): a window
        # that never opens (only what stays on between windows), and every20
        # without NVML, without the work callbacks (no links, no pre-roll),
        # without ever enabling the activity kinds (the switching alone)
        "win-never": ({}, rec("--capture-range", "nvtx:step", "--steps", "1000000000"), []),
        # one window, step 0 (before the timed steps), then never again: does
        # what a window switched on stay on after CUPTI's kinds are disabled?
        "win-once": ({}, rec("--capture-range", "nvtx:step", "--steps", "0-0"), []),
        "every20-no-nvml": ({"KPT_WINDOW_TEST_OFF": "nvml"}, rec("--capture-range", "nvtx:step", "--every", "20"), []),
        "every20-no-callbacks": ({"KPT_WINDOW_TEST_OFF": "callbacks"},
                                 rec("--capture-range", "nvtx:step", "--every", "20"), []),
        "every20-no-kinds": ({"KPT_WINDOW_TEST_OFF": "kinds"}, rec("--capture-range", "nvtx:step", "--every", "20"), []),
        # sparse sampling (issue 37): one step every 1 s / 10 s, CUPTI
        # attached only around it; --on-demand never triggered (what a
        # run waiting for `kptprof trigger` pays)
        "sample-1s": ({}, rec("--capture-range", "nvtx:step", "--sample-every", "1"), []),
        "sample-10s": ({}, rec("--capture-range", "nvtx:step", "--sample-every", "10"), []),
        "ondemand-idle": ({}, rec("--capture-range", "nvtx:step", "--on-demand"), []),
        "abl-kernel+memcpy": ({}, rec("--kinds", "kernel,memcpy"), []),
        "abl-kernel+memset": ({}, rec("--kinds", "kernel,memset"), []),
        "abl-kernel+sync": ({}, rec("--kinds", "kernel,sync"), []),
        "abl-no-nvml": ({"KPT_SAMPLE_MS": "0"}, rec(), []),
        "abl-link-runtime": ({"KPT_RANGE_LINK": "runtime"}, rec(), []),
        "abl-link-off": ({"KPT_RANGE_LINK": "off"}, rec(), []),
        "abl-link-both": ({"KPT_RANGE_LINK": "both"}, rec(), []),
        "torch.profiler": ({}, [], ["--mode", "profiler"]),
        "floor-kernel": ({"CUDA_INJECTION64_PATH": floor, "KPT_FLOOR_KINDS": "kernel"}, [], []),
        "floor": ({"CUDA_INJECTION64_PATH": floor}, [], []),
    }


class Proc:
    def __init__(self, mode, argv, env, log):
        self.mode = mode
        self.errf = open(log, "w")
        self.p = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.errf, text=True, bufsize=1)
        self.pid = None

    def ready(self):
        for line in self.p.stdout:
            if line.startswith("ready "):
                self.pid = int(line.split()[1])
                return True
        return False

    def block(self, workload, n):
        os.kill(self.pid, signal.SIGCONT)
        self.p.stdin.write(f"{workload} {n}\n")
        self.p.stdin.flush()
        first = -1
        for line in self.p.stdout:
            if line.startswith("first "):
                first = int(line.split()[2])
            elif line.startswith("times "):
                f = line.split()
                os.kill(self.pid, signal.SIGSTOP)
                return [float(x) for x in f[2:]], first
        raise RuntimeError(f"{self.mode}: process ended during a block")

    def finish(self, timeout=300):
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        self.errf.close()
        return rc


def window_meta(a, r, mode, kpt):
    """The collector's capture-window meta of one recording (windows
    opened, pre-rolls, what switching cost the program's thread, the
    kernels counted into windows) into DIR/window_meta.txt, one line per
    recording that has a window."""
    import json
    rep = subprocess.run([a.kptprof, "report", kpt, "--top", "0", "--format", "json"],
                         capture_output=True, text=True)
    try:
        meta = json.loads(rep.stdout).get("meta", {})
    except ValueError:
        return
    kv = {k[len("collector."):]: v for k, v in meta.items()
          if k.startswith("collector.") and any(w in k for w in ("window", "preroll", "sample", "attach", "detach"))}
    if kv:
        with open(f"{a.out}/window_meta.txt", "a") as f:
            f.write(f"{r} {mode} " + " ".join(f"{k}={v}" for k, v in sorted(kv.items()) if " " not in str(v)) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--kptprof", required=True)
    ap.add_argument("--floor", required=True)
    ap.add_argument("--kptprof-old", default=None, help="another build's kptprof (mode kptprof-old)")
    ap.add_argument("--script", required=True)
    ap.add_argument("--modes", nargs="+", default=["plain", "kptprof", "torch.profiler", "floor-kernel"])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--blocks", type=int, default=10)
    ap.add_argument("--steps", type=int, default=200, help="launch-bound steps per mode and round")
    ap.add_argument("--gpu-steps", type=int, default=200, help="GPU-bound steps per mode and round (0: none)")
    ap.add_argument("--budget-s", type=float, default=420, help="no round starts after this many seconds")
    ap.add_argument("--pin", default="", help="taskset CPU list for every process")
    a = ap.parse_args()
    table = mode_table(a.kptprof, a.floor, a.kptprof_old)
    for m in a.modes:
        if m not in table:
            sys.exit(f"overhead_interleave: unknown mode '{m}'")
    if "plain" not in a.modes:
        sys.exit("overhead_interleave: the modes must include plain")
    os.makedirs(f"{a.out}/logs", exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="kpt-ovh.")
    wls = [("launch", a.steps)] + ([("gpu", a.gpu_steps)] if a.gpu_steps > 0 else [])
    raw = open(f"{a.out}/raw.tsv", "w")
    raw.write("round mode workload median_ms mean_ms kernels_per_step\n")
    steps_f = open(f"{a.out}/steps.tsv", "w")
    steps_f.write("round mode workload block ms step\n")
    pin = ["taskset", "-c", a.pin] if a.pin else []
    t0 = time.time()
    done = 0
    for r in range(a.rounds):
        if time.time() - t0 > a.budget_s:
            print(f"overhead: time budget reached after {done} rounds", flush=True)
            break
        procs = []
        ts = time.time()
        for m in a.modes:
            env_add, prefix, sargs = table[m]
            env = dict(os.environ, **env_add)
            kpt = f"{tmp}/r{r}-{m}.kpt"
            argv = pin + [x.replace("{kpt}", kpt) for x in prefix] + [
                "python3", a.script, "--serve",
                "--steps", str(a.steps), "--gpu-steps", str(a.gpu_steps)] + sargs
            procs.append((Proc(m, argv, env, f"{a.out}/logs/r{r}-{m}.err"), kpt))
        ok = True
        for p, _ in procs:
            if not p.ready():
                print(f"overhead: round {r} mode {p.mode} did not start (logs/r{r}-{p.mode}.err)", flush=True)
                ok = False
        with open(f"{a.out}/process_seconds.txt", "a") as f:
            f.write(f"{r} start-up of {len(procs)} processes {time.time() - ts:.1f} s\n")
        times = {(p.mode, wl): [] for p, _ in procs for wl, _ in wls}
        if ok:
            for p, _ in procs:
                os.kill(p.pid, signal.SIGSTOP)
            try:
                for b in range(a.blocks):
                    n = len(procs)
                    order = [procs[(i + b + r) % n][0] for i in range(n)]
                    for wl, total in wls:
                        per = total // a.blocks + (1 if b < total % a.blocks else 0)
                        for p in order:
                            t, first = p.block(wl, per)
                            times[(p.mode, wl)] += t
                            steps_f.write("".join(f"{r} {p.mode} {wl} {b} {x} {first + i if first >= 0 else -1}\n"
                                                  for i, x in enumerate(t)))
            except (RuntimeError, BrokenPipeError) as e:
                print(f"overhead: round {r}: {e}", flush=True)
                ok = False
        for p, kpt in procs:
            rc = p.finish()
            err = open(f"{a.out}/logs/r{r}-{p.mode}.err").read()
            if rc != 0:
                print(f"overhead: round {r} mode {p.mode} exit {rc}", flush=True)
                ok = False
            if "dropped" in err:
                with open(f"{a.out}/dropped.txt", "a") as f:
                    f.write(f"{r} {p.mode} " + " | ".join(l for l in err.splitlines() if "dropped" in l) + "\n")
            if os.path.exists(kpt):
                rep = subprocess.run([a.kptprof, "report", kpt, "--top", "0"], capture_output=True, text=True)
                for l in rep.stdout.splitlines():
                    if l.startswith("processes "):
                        with open(f"{a.out}/recorded.txt", "a") as f:
                            f.write(f"{r} {p.mode} {l[len('processes '):]}\n")
                window_meta(a, r, p.mode, kpt)
                os.unlink(kpt)
        if not ok:
            continue
        for (m, wl), v in times.items():
            raw.write(f"{r} {m} {wl} {statistics.median(v):.4f} {statistics.fmean(v):.4f} -1\n")
        raw.flush()
        steps_f.flush()
        done += 1
        print(f"round {r} done ({time.time() - t0:.0f} s)", flush=True)
    print(f"rounds {done} in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
