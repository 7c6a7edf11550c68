/*
** fuzz-mkseeds OUTDIR: writes the seed corpora of the trace fuzzers into
** OUTDIR/trace_file (small exports of each schema shape, generated from the
** SQL of tests/unit/fixture.c with 512-byte pages so mutations reach every
** page) and OUTDIR/trace_rows (edit lists in the format of
** fuzz_trace_rows.c). Nothing is copied from the real-trace corpus.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture.h"
#include "fuzz_common.h"

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    int rc = in && out ? 0 : -1;
    char buf[65536];
    size_t n;
    while (!rc && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) rc = -1;
    if (in) fclose(in);
    if (out && fclose(out) != 0) rc = -1;
    return rc;
}

static int export_seed(const char *dir, const char *name, const char *schema, const char *rows)
{
    char *sql = NULL;
    if (!tg_fixture_append(&sql, "PRAGMA page_size=512;\n%s\n%s", schema, rows ? rows : "")) return -1;
    char *path = tg_fixture_from_sql(sql);
    free(sql);
    if (!path) return -1;
    char out[4096];
    snprintf(out, sizeof out, "%s/%s.sqlite", dir, name);
    int rc = copy_file(path, out);
    tg_fixture_remove(path);
    return rc;
}

static int bytes_seed(const char *dir, const char *name, const unsigned char *b, size_t n)
{
    char out[4096];
    snprintf(out, sizeof out, "%s/%s", dir, name);
    FILE *f = fopen(out, "wb");
    if (!f) return -1;
    size_t w = fwrite(b, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

static const char small_rows[] =
    "INSERT INTO StringIds VALUES (1,'k'),(2,'cudaLaunchKernel'),(3,'cudaMemcpy');"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, correlationId, globalPid,"
    " demangledName, shortName) VALUES (1000, 2000, 0, 7, 1, 1291845632, 1, 1), (5000, 9000, 0, 7, 2, 1291845632, 1, 1);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId)"
    " VALUES (500, 900, 1291845633, 1, 2), (4000, 4500, 1291845633, 2, 2), (9500, 9900, 1291845633, 3, 3);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, correlationId, globalPid, bytes,"
    " copyKind, srcKind, dstKind) VALUES (9600, 9800, 0, 7, 3, 1291845632, 1048576, 1, 0, 2);"
    "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (400, 9950, 59, 'step', 1291845633);";

/* small_rows with names, a GPU and an nsys version that carry what a
** human-facing report must neutralise (terminal sequences, C1, invalid
** UTF-8, U+FFFE, a newline before "::error::", "##["): the outputs are
** held to docs/formats.md by fz_report_checked, and the merge seeds made
** from this export's JSON result start the merge fuzzer there. */
static const char hostile_rows[] =
    "UPDATE StringIds SET value = 'k' || CAST(X'1B5B324A1B5D303B741BC29BEFBFBEFF0A3A3A6572726F723A3A78232323' AS TEXT)"
    " WHERE id = 1;"
    "UPDATE StringIds SET value = 'cudaMemcpy' || CAST(X'1B5B33316D0A3A3A7761726E696E673A3A79E280AE' AS TEXT)"
    " WHERE id = 3;"
    "INSERT INTO TARGET_INFO_GPU (id, name) VALUES (0, 'GPU' || CAST(X'1B5D383B3B687474703A2F2F781B5C0D0A2323' AS TEXT));"
    "UPDATE EXPORT_META_DATA SET value = '2024' || CAST(X'0A3A3A6572726F723A3A6E737973C0AF' AS TEXT)"
    " WHERE name = 'EXPORT_PRODUCT_VERSION';";

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz-mkseeds OUTDIR\n");
        return 2;
    }
    char files[4096], rows[4096], fields[4096];
    snprintf(files, sizeof files, "%s/trace_file", argv[1]);
    snprintf(rows, sizeof rows, "%s/trace_rows", argv[1]);
    snprintf(fields, sizeof fields, "%s/baseline_fields", argv[1]);
    mkdir(argv[1], 0755);
    if ((mkdir(files, 0755) != 0 && errno != EEXIST) || (mkdir(rows, 0755) != 0 && errno != EEXIST) ||
        (mkdir(fields, 0755) != 0 && errno != EEXIST)) {
        perror("fuzz-mkseeds: mkdir");
        return 1;
    }
    char *full = fz_rows_sql();
    int rc = 0;
    rc |= export_seed(files, "full-3.0", tg_fixture_schema_3_0, full);
    rc |= export_seed(files, "small-3.0", tg_fixture_schema_3_0, small_rows);
    rc |= export_seed(files, "small-2.9", tg_fixture_schema_2_9, small_rows);
    rc |= export_seed(files, "small-3.25", tg_fixture_schema_3_25, small_rows);
    rc |= export_seed(files, "empty-3.0", tg_fixture_schema_3_0, NULL);
    char *hostile = NULL;
    if (!tg_fixture_append(&hostile, "%s%s", small_rows, hostile_rows)) return 1;
    rc |= export_seed(files, "hostile-names", tg_fixture_schema_3_0, hostile);
    free(hostile);
    rc |= export_seed(files, "strings-only", "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);",
                      "INSERT INTO StringIds VALUES (1, 'x');");
    free(full);

    /* Edit lists (op, table, col, row, kind, value...): see fuzz_trace_rows.c. */
    static const unsigned char text_start[] = {0, 0, 0, 3, 5, 3, 'a', 'b', 'c'};
    static const unsigned char end_before[] = {0, 0, 1, 0, 3, 5};
    static const unsigned char int64_max[] = {3, 0, 0, 0, 3, 1, 0, 1, 1, 0, 3, 0};
    static const unsigned char nulls[] = {3, 1, 4, 0, 0, 0, 2, 0, 0, 0};
    static const unsigned char dup_corr[] = {4, 0, 0, 1, 0, 4, 0, 0, 1, 0, 3, 0, 5, 0, 3, 3};
    static const unsigned char drop_kernels[] = {6, 0, 0, 0, 0};
    static const unsigned char rename_start[] = {7, 1, 0, 0, 0};
    static const unsigned char nvtx_shift[] = {2, 4, 0, 7, 7, 0x80, 0x00, 2, 4, 1, 9, 7, 0x7f, 0xff};
    static const unsigned char delete_strings[] = {5, 5, 0, 1, 0, 5, 5, 0, 0, 0, 6, 5, 0, 0, 0};
    rc |= bytes_seed(rows, "text-start", text_start, sizeof text_start);
    rc |= bytes_seed(rows, "end-before-start", end_before, sizeof end_before);
    rc |= bytes_seed(rows, "int64-max", int64_max, sizeof int64_max);
    rc |= bytes_seed(rows, "nulls", nulls, sizeof nulls);
    rc |= bytes_seed(rows, "duplicate-correlation", dup_corr, sizeof dup_corr);
    rc |= bytes_seed(rows, "drop-kernels", drop_kernels, sizeof drop_kernels);
    rc |= bytes_seed(rows, "rename-start", rename_start, sizeof rename_start);
    rc |= bytes_seed(rows, "nvtx-shift", nvtx_shift, sizeof nvtx_shift);
    rc |= bytes_seed(rows, "delete-strings", delete_strings, sizeof delete_strings);

    /* Baseline edits [op, target, arg] (fuzz_baseline_fields.c): nodes in
    ** depth-first order are 0 root, 1 date, 2 format_version, 3 metrics,
    ** 4 iteration-time-regression, 5 direction, 6 mad, 7 median, 8 metric,
    ** 9 n_runs, 10 n_samples, 11 runs, 12-14 its values, 15 samples, ...
    ** Values: 1 "1", 10 "1e400", 13 "5e-324", 15 ".inf", 17 ".nan". */
    static const unsigned char huge_median[] = {0, 7, 10};
    static const unsigned char nan_run[] = {0, 12, 17};
    static const unsigned char inf_sample[] = {0, 16, 15};
    static const unsigned char subnormal_runs[] = {0, 12, 13, 0, 13, 13, 0, 14, 13};
    static const unsigned char no_n_runs[] = {2, 9, 0};
    static const unsigned char dup_median[] = {3, 7, 0};
    static const unsigned char unknown_key[] = {4, 4, 0};
    static const unsigned char latin1_date[] = {1, 1, 6, 'x', 0xe9, 'y', 0xff, 0x80, '\n'};
    static const unsigned char short_runs[] = {8, 11, 1};
    rc |= bytes_seed(fields, "untouched", (const unsigned char *)"", 0);   /* the template */
    rc |= bytes_seed(fields, "huge-median", huge_median, sizeof huge_median);
    rc |= bytes_seed(fields, "nan-run", nan_run, sizeof nan_run);
    rc |= bytes_seed(fields, "inf-sample", inf_sample, sizeof inf_sample);
    rc |= bytes_seed(fields, "subnormal-runs", subnormal_runs, sizeof subnormal_runs);
    rc |= bytes_seed(fields, "no-n-runs", no_n_runs, sizeof no_n_runs);
    rc |= bytes_seed(fields, "duplicate-median", dup_median, sizeof dup_median);
    rc |= bytes_seed(fields, "unknown-key", unknown_key, sizeof unknown_key);
    rc |= bytes_seed(fields, "latin1-date", latin1_date, sizeof latin1_date);
    rc |= bytes_seed(fields, "short-runs", short_runs, sizeof short_runs);
    if (rc) fprintf(stderr, "fuzz-mkseeds: could not write every seed\n");
    return rc ? 1 : 0;
}
