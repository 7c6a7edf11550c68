/*
** kineto-trace: write a PyTorch profiler (Kineto) trace of N kernels with
** the shape torch.profiler gives one (issue 36 item 3; the sizes and what
** bench/run measures on it: bench/README.md, "A 1M-kernel Kineto trace").
** Not a replica of one capture, as scale-trace is of an export: a training
** loop of S steps, each a `ProfilerStep#N` range (user_annotation on the
** CPU, gpu_user_annotation on the GPU) holding
**
**   - one pinned HtoD copy (aten::copy_ -> cudaMemcpyAsync -> gpu_memcpy),
**   - K kernels, each launched by its own CPU op (cpu_op aten::... ->
**     cuda_runtime cudaLaunchKernel -> kernel), the launch and the kernel
**     sharing a correlation id and joined by an `ac2g` flow (ph s at the
**     launch, ph f at the kernel, id = the correlation, as Kineto writes),
**   - one blocking cudaStreamSynchronize under aten::item at the end.
**
** The events come in Kineto's order and formatting (the captures in
** tests/fixtures/captures/): the header (schemaVersion, deviceProperties,
** CUDA versions, baseTimeNanoseconds), then every CPU op and annotation,
** then the CUPTI activities (runtime calls and their GPU ops with their
** flows), the GPU annotations, the process and thread metadata (ph M), the
** profiler's span and instant events, and traceName. Timestamps are
** microseconds with three decimals from a capture-like epoch. Durations
** vary by a fixed hash of (step, kernel), so the file is the same bytes on
** every run: kernels 5-11 us, one launched every 10 us (the GPU about 80%
** busy, queues short), the step ends when the synchronize returns.
**
**     kineto-trace [--kernels N] [--per-step K] OUT.json
**
** N defaults to 1,000,000 and K to 200 (so 5,000 steps); OUT "-" is stdout.
*/
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CPU ops and the kernels they launch, as an eager transformer step runs
** them (names from the captures in tests/fixtures/captures/). */
static const struct {
    const char *op;
    const char *kernel;
    int regs, grid, block;
} launches[] = {
    {"aten::mm", "ampere_sgemm_128x64_tn", 122, 384, 256},
    {"aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                  "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
     26, 1024, 128},
    {"aten::gelu", "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl, "
                   "at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl, at::detail::Array<char*, 2>)",
     28, 2048, 128},
    {"aten::native_layer_norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"
                                "(int, float, float const*, float const*, float const*, float*, float*, float*)",
     40, 512, 256},
    {"aten::_softmax", "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
                       "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
     37, 4096, 512},
    {"aten::addmm", "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
     168, 132, 384},
};
#define NLAUNCH (sizeof launches / sizeof launches[0])

static const char *pid_s = "826";        /* the Python process */
static const double t0 = 5807558765541.382;   /* us, as a capture's */

static FILE *out;
static uint64_t ev_idx;                  /* the CPU ops' "Ev Idx" */

/* splitmix64: a fixed, well-spread hash of a counter */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static double jitter(uint64_t step, uint64_t j, double lo, double hi)
{
    return lo + (hi - lo) * (double)(mix(step * 1000003u + j) % 1000) / 1000.0;
}

/* One step's timeline, computed the same way in both passes. */
typedef struct step_clock {
    double start;        /* ProfilerStep ts */
    double gpu_free;     /* when the stream's last op ends */
} step_clock;

static double op_ts(double start, int64_t j) { return start + 40.0 + (double)j * 10.0; }

/* The kernel j's start and duration, given when the stream is free. */
static double kernel_at(step_clock *c, uint64_t step, int64_t j, double *dur)
{
    double launch_end = op_ts(c->start, j) + 2.5 + 4.2;
    double ts = launch_end + 3.0 > c->gpu_free + 0.6 ? launch_end + 3.0 : c->gpu_free + 0.6;
    *dur = jitter(step, (uint64_t)j, 5.0, 11.0);
    c->gpu_free = ts + *dur;
    return ts;
}

static void comma(bool *first)
{
    fputs(*first ? "\n  {\n" : ",\n  {\n", out);
    *first = false;
}

static void cpu_event(bool *first, const char *cat, const char *name, double ts, double dur, int64_t ext,
                      const char *extra)
{
    comma(first);
    fprintf(out,
            "    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %s, \"tid\": %s,\n"
            "    \"ts\": %.3f, \"dur\": %.3f,\n"
            "    \"args\": {\n"
            "      \"External id\": %" PRId64 ",\"Record function id\": 0%s, \"Ev Idx\": %" PRIu64 "\n"
            "    }\n  }",
            cat, name, pid_s, pid_s, ts, dur, ext, extra, ev_idx++);
}

static void runtime_event(bool *first, const char *name, double ts, double dur, int64_t ext, int cbid,
                          int64_t corr, bool flow)
{
    comma(first);
    fprintf(out,
            "    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": %s, \"tid\": %s,\n"
            "    \"ts\": %.3f, \"dur\": %.3f,\n"
            "    \"args\": {\n"
            "      \"External id\": %" PRId64 ",      \"cbid\": %d, \"correlation\": %" PRId64 "\n"
            "    }\n  }",
            name, pid_s, pid_s, ts, dur, ext, cbid, corr);
    if (!flow) return;
    comma(first);
    fprintf(out,
            "    \"ph\": \"s\", \"id\": %" PRId64 ", \"pid\": %s, \"tid\": %s, \"ts\": %.3f,\n"
            "    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }",
            corr, pid_s, pid_s, ts);
}

static void flow_end(bool *first, int64_t corr, double ts)
{
    comma(first);
    fprintf(out,
            "    \"ph\": \"f\", \"id\": %" PRId64 ", \"pid\": 0, \"tid\": 7, \"ts\": %.3f,\n"
            "    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }",
            corr, ts);
}

/* Pass 1: the CPU side, every step's annotation and ops in time order. */
static void write_cpu(bool *first, const step_clock *steps, uint64_t nsteps, int64_t n, int64_t k)
{
    int64_t ext = 1, seq = 1680;
    for (uint64_t s = 0; s < nsteps; s++) {
        int64_t kn = (int64_t)(s + 1) * k <= n ? k : n - (int64_t)s * k;
        double start = steps[s].start, end = steps[s + 1].start - 1.0;
        char name[40];
        snprintf(name, sizeof name, "ProfilerStep#%" PRIu64, s + 1);
        cpu_event(first, "user_annotation", name, start, end - start, ext++, "");
        cpu_event(first, "cpu_op", "aten::copy_", start + 5.0, 30.0, ext++, "");
        for (int64_t j = 0; j < kn; j++) {
            char extra[64];
            snprintf(extra, sizeof extra, ", \"Sequence number\": %" PRId64 ", \"Fwd thread id\": 0", seq++);
            cpu_event(first, "cpu_op", launches[(uint64_t)j % NLAUNCH].op, op_ts(start, j), 8.0, ext++, extra);
        }
        double item = op_ts(start, kn);
        cpu_event(first, "cpu_op", "aten::item", item, end - 2.0 - item, ext++, "");
    }
}

/* Pass 2: the CUPTI activities, each launch then its kernel, as Kineto
** takes them from the activity buffer; External ids and correlations
** follow pass 1's. */
static void write_gpu(bool *first, step_clock *steps, uint64_t nsteps, int64_t n, int64_t k)
{
    int64_t ext = 1, corr = 16285;
    for (uint64_t s = 0; s < nsteps; s++) {
        int64_t kn = (int64_t)(s + 1) * k <= n ? k : n - (int64_t)s * k;
        step_clock c = {steps[s].start, steps[s].gpu_free};
        ext++;   /* the ProfilerStep */
        int64_t copy_ext = ext++, copy_corr = corr++;
        runtime_event(first, "cudaMemcpyAsync", c.start + 12.0, 9.0, copy_ext, 41, copy_corr, true);
        double cts = c.start + 24.0 > c.gpu_free ? c.start + 24.0 : c.gpu_free + 0.6;
        comma(first);
        fprintf(out,
                "    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pinned -> Device)\", \"pid\": 0, "
                "\"tid\": 7,\n"
                "    \"ts\": %.3f, \"dur\": 4.288,\n"
                "    \"args\": {\n"
                "      \"External id\": %" PRId64 ",      \"device\": 0, \"context\": 1,      \"stream\": 7, "
                "\"correlation\": %" PRId64 ",      \"bytes\": 65536, \"memory bandwidth (GB/s)\": 15.283582089552239\n"
                "    }\n  }",
                cts, copy_ext, copy_corr);
        flow_end(first, copy_corr, cts);
        c.gpu_free = cts + 4.288;
        for (int64_t j = 0; j < kn; j++) {
            int64_t e = ext++, cr = corr++;
            double lts = op_ts(c.start, j) + 2.5, dur;
            runtime_event(first, "cudaLaunchKernel", lts, 4.2, e, 211, cr, true);
            double kts = kernel_at(&c, s, j, &dur);
            uint64_t l = (uint64_t)j % NLAUNCH;
            comma(first);
            fprintf(out,
                    "    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7,\n"
                    "    \"ts\": %.3f, \"dur\": %.3f,\n"
                    "    \"args\": {\n"
                    "      \"External id\": %" PRId64 ",\n"
                    "            \"queued\": 0, \"device\": 0, \"context\": 1,      \"stream\": 7, "
                    "\"correlation\": %" PRId64 ",      \"registers per thread\": %d,      \"shared memory\": 0,"
                    "      \"blocks per SM\": %.6f,      \"warps per SM\": %.6f,      \"grid\": [%d, 1, 1],"
                    "      \"block\": [%d, 1, 1],      \"est. achieved occupancy %%\": 50\n"
                    "    }\n  }",
                    launches[l].kernel, kts, dur, e, cr, launches[l].regs, launches[l].grid / 132.0,
                    launches[l].grid * launches[l].block / 32 / 132.0, launches[l].grid, launches[l].block);
            flow_end(first, cr, kts);
        }
        double sync = op_ts(c.start, kn) + 3.0;
        runtime_event(first, "cudaStreamSynchronize", sync, steps[s + 1].start - 4.0 - sync, ext++, 131, corr++,
                      false);
    }
}

/* The GPU mirror of the ProfilerStep ranges: first to last op of the step. */
static void write_gpu_annotations(bool *first, const step_clock *steps, uint64_t nsteps)
{
    for (uint64_t s = 0; s < nsteps; s++) {
        comma(first);
        fprintf(out,
                "    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#%" PRIu64 "\", "
                "\"pid\": 0, \"tid\": 7,\n"
                "    \"ts\": %.3f, \"dur\": %.3f,\n"
                "    \"args\": {\n"
                "      \"External id\": %" PRIu64 "\n"
                "    }\n  }",
                s + 1, steps[s].start + 24.0, steps[s + 1].gpu_free - steps[s].start - 24.0, s + 1);
    }
}

static void write_meta(bool *first, double span_end)
{
    static const char *meta[][4] = {
        {"process_name", "826", "name", "\"python3\""},   {"process_labels", "826", "labels", "\"CPU\""},
        {"process_sort_index", "826", "sort_index", "826"}, {"process_name", "0", "name", "\"python3\""},
        {"process_labels", "0", "labels", "\"GPU 0\""},     {"process_sort_index", "0", "sort_index", "5000000"},
        {"thread_name", "826", "name", "\"thread 826 (python3)\""},
        {"thread_sort_index", "826", "sort_index", "826"},
    };
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++) {
        comma(first);
        fprintf(out,
                "    \"name\": \"%s\", \"ph\": \"M\", \"ts\": %.3f, \"pid\": %s, \"tid\": %s,\n"
                "    \"args\": {\n      \"%s\": %s\n    }\n  }",
                meta[i][0], t0 - 300.0, meta[i][1], strcmp(meta[i][0], "thread_name") && strcmp(meta[i][0], "thread_sort_index") ? "0" : "826",
                meta[i][2], meta[i][3]);
    }
    comma(first);
    fprintf(out,
            "    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": %.3f, \"dur\": %.3f,\n"
            "    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n"
            "    \"name\": \"PyTorch Profiler (0)\",\n"
            "    \"args\": {\n      \"Op count\": 0\n    }\n  }",
            t0 - 400.0, span_end - t0 + 400.0);
    comma(first);
    fprintf(out,
            "    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
            "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": %.3f\n  }",
            t0 - 400.0);
    comma(first);
    fprintf(out,
            "    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n"
            "    \"pid\": \"\", \"tid\": \"\", \"ts\": %.3f\n  }",
            span_end + 50.0);
}

/* The steps' starts: a step begins 10 us after the last one's synchronize
** returned, i.e. after its last kernel. steps[nsteps] closes the last. */
static step_clock *plan(uint64_t nsteps, int64_t n, int64_t k)
{
    step_clock *steps = calloc(nsteps + 1, sizeof *steps);
    if (!steps) return NULL;
    step_clock c = {t0, t0};
    for (uint64_t s = 0; s < nsteps; s++) {
        int64_t kn = (int64_t)(s + 1) * k <= n ? k : n - (int64_t)s * k;
        steps[s] = c;
        double cts = c.start + 24.0 > c.gpu_free ? c.start + 24.0 : c.gpu_free + 0.6;
        c.gpu_free = cts + 4.288;
        double dur;
        for (int64_t j = 0; j < kn; j++) kernel_at(&c, s, j, &dur);
        double sync_end = c.gpu_free + 2.0, cpu_end = op_ts(c.start, kn) + 8.0;
        c.start = (sync_end > cpu_end ? sync_end : cpu_end) + 10.0;
    }
    steps[nsteps] = c;
    return steps;
}

static int usage(void)
{
    fprintf(stderr, "usage: kineto-trace [--kernels N] [--per-step K] OUT.json\n");
    return 2;
}

static bool count_arg(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || *end || end == s || x < 1 || x > 1000000000LL) return false;
    *v = x;
    return true;
}

int main(int argc, char **argv)
{
    int64_t n = 1000000, k = 200;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kernels") == 0 && i + 1 < argc) {
            if (!count_arg(argv[++i], &n)) return fprintf(stderr, "kineto-trace: --kernels needs a count from 1 to 10^9\n"), 2;
        } else if (strcmp(argv[i], "--per-step") == 0 && i + 1 < argc) {
            if (!count_arg(argv[++i], &k)) return fprintf(stderr, "kineto-trace: --per-step needs a count from 1 to 10^9\n"), 2;
        } else if (!path && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0)) {
            path = argv[i];
        } else {
            return usage();
        }
    }
    if (!path) return usage();
    uint64_t nsteps = (uint64_t)((n + k - 1) / k);
    step_clock *steps = plan(nsteps, n, k);
    if (!steps) return fprintf(stderr, "kineto-trace: out of memory\n"), 1;
    out = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!out) {
        fprintf(stderr, "kineto-trace: cannot write %s: %s\n", path, strerror(errno));
        free(steps);
        return 1;
    }
    fprintf(out,
            "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n"
            "      \"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85017493504,\n"
            "      \"computeMajor\": 9, \"computeMinor\": 0,\n"
            "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
            "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
            "      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n"
            "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, "
            "\"sharedMemPerMultiprocessor\": 233472\n    }\n  ],\n"
            "  \"cuda_driver_version\": 13000,\n  \"cuda_runtime_version\": 13000,\n  \"cupti_version\": 130001,\n"
            "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1790857026000000000,\n"
            "  \"traceEvents\": [");
    bool first = true;
    write_cpu(&first, steps, nsteps, n, k);
    write_gpu(&first, steps, nsteps, n, k);
    write_gpu_annotations(&first, steps, nsteps);
    write_meta(&first, steps[nsteps].start);
    fprintf(out, "\n  ],\n  \"traceName\": \"%s\"\n}\n", strcmp(path, "-") == 0 ? "kineto-trace.json" : path);
    free(steps);
    bool bad = ferror(out) != 0;
    if (out != stdout) bad = fclose(out) != 0 || bad;
    else bad = fflush(out) != 0 || bad;
    if (bad) return fprintf(stderr, "kineto-trace: write error on %s\n", path), 1;
    return 0;
}
