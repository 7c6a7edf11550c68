# Replicate `tracegate check --format json` results to N ranks (bench/merge-scale,
# tests/merge_memory_test.sh): rank r is a copy of template r % k (the templates are
# the files given, each one trace checked with --rank and --world-size) whose trace's
# "rank" is r and "world_size" N, written to OUT/rankNNNNN.json.
#
#   awk -v N=10000 -v OUT=dir -f bench/replicate-results.awk template.json...
#
# The templates are rewritten line by line: fmt_json.c writes a trace's members six
# spaces deep, one per line.
FNR == 1 { k++ }
{ line[k, FNR] = $0; len[k] = FNR }
END {
    if (!k || N < 1 || OUT == "") { print "replicate-results: N, OUT and templates needed" > "/dev/stderr"; exit 2 }
    for (r = 0; r < N; r++) {
        t = r % k + 1
        f = sprintf("%s/rank%05d.json", OUT, r)
        ranks = worlds = 0
        for (i = 1; i <= len[t]; i++) {
            s = line[t, i]
            if (s ~ /^      "rank": /) { s = "      \"rank\": " r ","; ranks++ }
            else if (s ~ /^      "world_size": /) { s = "      \"world_size\": " N ","; worlds++ }
            print s > f
        }
        close(f)
        if (ranks != 1 || worlds != 1) { print "replicate-results: template " t " is not one trace checked with --rank and --world-size" > "/dev/stderr"; exit 2 }
    }
}
