// launch_main.cu - kpt-launch-bench: runs kpt_launch_us() reps times.
//   kpt-launch-bench [--floor | --floor-all] [--subscribe-first] [--nvtx] [--n N] [--reps R] [--pin CPU]
//                    [--steps S --out FILE [--toggle HOW --window-every K]]
// --steps S: instead of reps, S steps, each an NVTX range "step" (the
// default domain) around n launches, as a training loop's steps (for
// `record --capture-range nvtx:step --every K`, scripts/gpu/windows_launch.sh);
// FILE gets one line per step: "step host_us_per_launch" (after the
// summary line's warm-up; steps are numbered from 0 as the collector counts
// them, the warm-up is outside any step).
// --toggle HOW (with --steps): a capture window by hand instead of kptprof's:
// CUPTI switched on at the start of steps 0, K, 2K, ... (K 0: step 0 only)
// and off at their end, the way HOW names (kpt_launch_cupti_toggle in
// launch_bench.cu): what a closed window leaves on the launch path.
// --pin CPU: after CUDA start-up, pin the launching thread to that CPU, so
// that every mode launches from the same core (threads CUDA and CUPTI start
// keep the process's CPU set).
// Prints one line: "launch mode=plain|floor|floor_all n=N reps=R median_us=... p10_us=... p90_us=...
// wall_us=...": host us per launch (median, p10, p90 of reps), wall us incl. sync
#include <algorithm>
#include <sched.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

static void CUPTIAPI no_callback(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {}

extern "C" double kpt_launch_us(int n);
extern "C" int kpt_launch_cupti_floor(void);
extern "C" int kpt_launch_cupti_floor_all(void);
extern "C" unsigned long long kpt_launch_cupti_records(void);
extern "C" double kpt_launch_last_wall_us(void);
extern "C" int kpt_launch_cupti_toggle(int on, const char *how);
extern "C" unsigned long long kpt_launch_cupti_toggle_calls(void);

int main(int argc, char **argv)
{
	int n = 20000, reps = 31, floor_mode = 0, pin = -1, nvtx = 0, steps = 0, every = 0;
	const char *out = nullptr, *toggle = nullptr;
	std::vector<double> v, w;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--floor"))
			floor_mode = 1;
		else if (!strcmp(argv[i], "--floor-all"))
			floor_mode = 2;
		else if (!strcmp(argv[i], "--subscribe-first")) {
			/* Another CUPTI tool in the process before CUDA starts: the
			 * collector must report "busy" and let the program run. */
			CUpti_SubscriberHandle sub;
			if (cuptiSubscribe(&sub, no_callback, nullptr) != CUPTI_SUCCESS)
				return 1;
		}
		else if (!strcmp(argv[i], "--nvtx"))
			nvtx = 1; /* launches inside an NVTX range, as a training step's */
		else if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pin") && i + 1 < argc)
			pin = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--toggle") && i + 1 < argc)
			toggle = argv[++i];
		else if (!strcmp(argv[i], "--window-every") && i + 1 < argc)
			every = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: kpt-launch-bench [--floor | --floor-all] [--subscribe-first] [--nvtx] [--n N] [--reps R] [--pin CPU] [--steps S --out FILE [--toggle HOW --window-every K]]\n");
			return 2;
		}
	}
	if (floor_mode && (floor_mode == 1 ? kpt_launch_cupti_floor() : kpt_launch_cupti_floor_all()) != 0) {
		fprintf(stderr, "kpt-launch-bench: cannot enable CUPTI\n");
		return 1;
	}
	if (cudaFree(0) != cudaSuccess) {
		fprintf(stderr, "kpt-launch-bench: no CUDA device\n");
		return 1;
	}
	if (pin >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(pin, &set);
		if (sched_setaffinity(0, sizeof set, &set) != 0) {
			perror("kpt-launch-bench: sched_setaffinity");
			return 1;
		}
	}
	if (steps > 0) {
		FILE *f = out ? fopen(out, "w") : nullptr;

		if (!f || n < 1) {
			fprintf(stderr, "kpt-launch-bench: --steps needs --out FILE (writable) and --n >= 1\n");
			return 2;
		}
		kpt_launch_us(2000); /* warm-up, outside any step */
		for (int i = 0; i < steps; i++) {
			int win = toggle && (every > 0 ? i % every == 0 : i == 0);

			if (win && kpt_launch_cupti_toggle(1, toggle) != 0)
				return 1;
			nvtxRangePushA("step");
			v.push_back(kpt_launch_us(n));
			nvtxRangePop();
			if (win && kpt_launch_cupti_toggle(0, toggle) != 0)
				return 1;
			if (v.back() < 0) {
				fprintf(stderr, "kpt-launch-bench: a launch or sync failed in step %d\n", i);
				return 1;
			}
		}
		for (int i = 0; i < steps; i++)
			fprintf(f, "%d %.4f\n", i, v[(size_t)i]);
		if (fclose(f) != 0) {
			perror("kpt-launch-bench: --out");
			return 1;
		}
		std::sort(v.begin(), v.end());
		printf("launch mode=%s n=%d steps=%d median_us=%.4f", toggle ? toggle : floor_mode == 2 ? "floor_all" : floor_mode ? "floor" : "plain", n,
		       steps, v[v.size() / 2]);
		if (toggle)
			printf(" callbacks=%llu records=%llu", kpt_launch_cupti_toggle_calls(), kpt_launch_cupti_records());
		printf("\n");
		return 0;
	}
	if (nvtx)
		nvtxRangePushA("loop");
	kpt_launch_us(2000); /* warm-up */
	for (int r = 0; r < reps; r++) {
		v.push_back(kpt_launch_us(n));
		w.push_back(kpt_launch_last_wall_us());
	}
	if (nvtx)
		nvtxRangePop();
	std::sort(v.begin(), v.end());
	std::sort(w.begin(), w.end());
	printf("launch mode=%s n=%d reps=%d median_us=%.4f p10_us=%.4f p90_us=%.4f", floor_mode == 2 ? "floor_all" : floor_mode ? "floor" : "plain",
	       n, reps, v[v.size() / 2], v[v.size() / 10], v[v.size() * 9 / 10]);
	printf(" wall_us=%.4f", w[w.size() / 2]);
	if (floor_mode)
		printf(" records=%llu", kpt_launch_cupti_records());
	printf("\n");
	return 0;
}
