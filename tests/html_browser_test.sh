#!/usr/bin/env bash
# The HTML report in a real browser (issue #19): headless Chromium opens
# each report and must log nothing (no script error, no blocked or failed
# load: the report's Content-Security-Policy turns any outside reference
# into a console message), and a harness page that loads the report in a
# frame checks what a reader needs: the verdict, the findings table with
# one row per result, the charts (SVG images with a title and a
# description: iterations against the baseline band, the device timeline,
# what changed), cited gaps and iterations linking to evidence rows that
# exist, every evidence row and reproduce query, keyboard focus on the
# links, no outside reference at all. A canary proves the console check
# sees what it looks for: a copy of the example report with one outside
# image, loaded beside it, must produce the console message of the CSP
# blocking it. The print style must hide the navigation; each report is
# printed to PDF: several pages, and (pdftotext) the printed text holds
# the verdict and every finding's message.
#
# Reports: a failing baseline check on a real trace (realistic_regressed
# against a baseline of the two realistic runs, from ../shared/traces),
# a Kineto trace (jq reproduce queries), and the bundled example (a cited
# gap, a suppressed finding). Without Chromium, or when it cannot start,
# the test is skipped (exit 77) with the reason; ci/browser-deps.sh
# installs it (Debian's chromium, and poppler-utils for pdftotext). In the
# project's CI (tests/require.sh: TG_REQUIRE_ALL=1 or CI set) a skip, a
# missing real or Kineto trace, or a missing pdftotext fails the test.
# Usage: html_browser_test.sh EXAMPLE_TRACE
set -uo pipefail
bin="$TG_BINARY"
example="$1"
root="$TG_SOURCE_ROOT"
traces="${TG_SHARED_TRACES:-}"
# shellcheck source=tests/require.sh
. "$root/tests/require.sh"
# shellcheck source=tests/browser.sh
. "$root/tests/browser.sh"
tg_browser_find html_browser
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shots="${TG_ARTIFACTS:-$tmp/shots}"
mkdir -p "$shots"
tg_browser_start html_browser
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
# required input absent: a failure in CI, a note elsewhere
absent() {
    if tg_required; then fail "$* (required in CI: tests/require.sh)"; else echo "note: $*"; fi
}
pdftext=1
if ! command -v pdftotext >/dev/null; then
    pdftext=0
    absent "no pdftotext (poppler-utils): the printed reports' text is not checked, only their page count"
fi

# The harness: loads REPORT in a frame (same origin with
# --allow-file-access-from-files) and writes PASS or what failed into
# #result, which --dump-dom prints. Expected numbers come from the JSON
# report of the same run.
harness() {  # harness REPORT JSON VERDICT WANT_CHARTS WANT_CITED_GAP WANT_REPRODUCE [CANARY]
    local report=$1 json=$2 verdict=$3 charts=$4 gap=$5 reproduce=$6 canary=${7:-}
    local results evidence findings
    results=$(jq '([.traces[].results[]] | length) + ([.traces[] | select(.error)] | length)' "$json")
    # a finding is detailed with its evidence; so is a regression rule's comparison
    evidence=$(jq '[.traces[].results[] | select(.status == "fail" or .status == "inconclusive" or .baseline)
                    | .evidence | length] | add // 0' "$json")
    findings=$(jq '[.traces[].results[] | select(.status == "fail" or .status == "inconclusive" or .status == "error")] | length' "$json")
    cat > "$tmp/check.html" <<HTML
<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>harness</title></head><body>
<pre id="result">not run</pre>
<iframe id="r" src="$(basename "$report")" style="width:1280px;height:900px"></iframe>
${canary:+<iframe id="c" src="$(basename "$canary")" style="width:200px;height:100px"></iframe>}
<script>
const want = {verdict: "$verdict", results: $results, evidence: $evidence, findings: $findings,
              charts: $charts, gap: $gap, reproduce: "$reproduce"};
const bad = [];
function visible(el) {
  if (!el) return false;
  const r = el.getBoundingClientRect(), s = el.ownerDocument.defaultView.getComputedStyle(el);
  return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none";
}
function check(d) {
  const need = (cond, what) => { if (!cond) bad.push(what); };
  need(d.documentElement.lang === "en", "html lang");
  need(d.title.startsWith("tracegate: " + want.verdict), "title: " + d.title);
  const verdict = d.querySelector(".verdict");
  need(visible(verdict) && verdict.textContent.startsWith(want.verdict), "verdict shown: " + (verdict && verdict.textContent));
  need(d.querySelector("main") && d.querySelector("header") && d.querySelector("nav"), "landmarks");
  const skip = d.querySelector("a.skip");
  need(skip && d.getElementById(skip.getAttribute("href").slice(1)), "skip link to the findings");
  const rows = d.querySelectorAll("#findings ~ table tbody tr, section[aria-labelledby=findings] tbody tr");
  need(rows.length === want.results, "findings table rows " + rows.length + ", want " + want.results);
  need(visible(d.getElementById("findings")), "findings heading visible");
  const svgs = [...d.querySelectorAll("svg[role=img]")];
  need(svgs.length >= want.charts, "charts " + svgs.length + ", want at least " + want.charts);
  for (const svg of svgs) {
    need(visible(svg), "chart visible: " + svg.parentElement.id);
    const ids = (svg.getAttribute("aria-labelledby") || "").split(" ");
    const title = d.getElementById(ids[0]), desc = d.getElementById(ids[1]);
    need(title && title.tagName === "title" && title.textContent.length > 0, "chart title: " + svg.parentElement.id);
    need(desc && desc.tagName === "desc" && desc.textContent.length > 10, "chart description: " + svg.parentElement.id);
    need(svg.parentElement.tagName === "FIGURE" && svg.parentElement.querySelector("figcaption"), "figure caption");
  }
  for (const a of d.querySelectorAll("a[href^='#']")) {
    const id = a.getAttribute("href").slice(1);
    need(d.getElementById(id), "link target #" + id);
  }
  const cited = d.querySelectorAll("svg a[href^='#']");
  if (want.gap) {
    const gapLink = d.querySelector("svg a[href^='#'] rect.gap");
    need(gapLink, "a cited gap drawn as a link");
    if (gapLink) {
      const target = d.getElementById(gapLink.parentElement.getAttribute("href").slice(1));
      need(target && target.tagName === "TR" && target.closest("article.finding"), "the gap's link reaches an evidence row");
      need(visible(gapLink), "the cited gap is visible");
    }
  }
  if (cited.length) {
    const a = cited[0];
    a.focus();
    need(d.activeElement === a, "a cited point or gap takes keyboard focus");
    need(a.getAttribute("aria-label"), "a cited link is named for screen readers");
  }
  const evRows = d.querySelectorAll("article.finding:not(.error) tr[id]");
  need(evRows.length === want.evidence, "evidence rows " + evRows.length + ", want " + want.evidence);
  for (const tr of evRows) need(visible(tr), "evidence row visible: " + tr.id);
  const articles = d.querySelectorAll("article.finding");
  need(articles.length >= want.findings, "finding details " + articles.length + ", want " + want.findings);
  const queries = [...d.querySelectorAll("article.finding pre code")];
  need(queries.length > 0 && queries.every(q => q.textContent.includes(want.reproduce)),
       "reproduce queries holding '" + want.reproduce + "'");
  need(queries.every(q => q.closest("details") && !q.closest("details").open), "reproduce queries collapsed");
  // self-contained: nothing from outside, no script
  need(!d.querySelector("script, link, iframe, object, embed, img[src], image"), "no script or outside resource");
  for (const el of d.querySelectorAll("[src], [href], [srcset]")) {
    const v = el.getAttribute("src") || el.getAttribute("href") || el.getAttribute("srcset") || "";
    need(v.startsWith("#"), "outside reference: " + v);
  }
  need(![...d.querySelectorAll("style")].some(s => /url\(|@import/.test(s.textContent)), "style loads nothing");
  // printable: the browser parsed a print style that hides the navigation
  const print = [...d.styleSheets].flatMap(sh => [...sh.cssRules])
                                  .filter(r => r.media && [...r.media].includes("print"));
  const hides = sel => print.some(m => [...m.cssRules].some(r => r.selectorText &&
      r.selectorText.split(",").map(x => x.trim()).includes(sel) && r.style.display === "none"));
  need(print.length > 0 && hides("nav") && hides(".skip"), "a print style hiding nav and the skip link");
}
document.getElementById("r").addEventListener("load", () => {
  try { check(document.getElementById("r").contentDocument); } catch (e) { bad.push("harness: " + e); }
  document.getElementById("result").textContent = bad.length ? "FAIL: " + bad.join(" | ") : "PASS";
});
</script></body></html>
HTML
}

# printed REPORT WHAT: print to PDF; several pages, and the text printed
# holds the verdict and every finding's message (whitespace aside: lines
# wrap). The harness checked the print style itself.
printed() {
    local report=$1 what=$2 json="${1%.html}.json"
    rm -f "$tmp/out.pdf"
    chrome --no-pdf-header-footer --print-to-pdf="$tmp/out.pdf" "file://$report" >/dev/null 2>&1
    pages=$(grep -ao '/Count [0-9]*' "$tmp/out.pdf" 2>/dev/null | head -1 | cut -d' ' -f2)
    [ "${pages:-0}" -ge 2 ] || fail "$what: printing to PDF gave ${pages:-no} pages, want several"
    [ "$pdftext" = 1 ] && [ -s "$tmp/out.pdf" ] || return 0
    pdftotext "$tmp/out.pdf" - 2>/dev/null | tr -d ' \t\n\f' > "$tmp/pdf.txt"
    local title want n=0
    title=$(sed -n 's|.*<title>tracegate: \([^<]*\)</title>.*|\1|p' "$report" | head -1)
    grep -qF -- "$(printf '%s' "$title" | tr -d ' ' | cut -c1-40)" "$tmp/pdf.txt" ||
        fail "$what: the printed report does not show the verdict '$title'"
    while IFS= read -r want; do
        n=$((n + 1))
        grep -qF -- "$want" "$tmp/pdf.txt" || fail "$what: the printed report lacks the finding '$want'"
    done < <(jq -r '.traces[].results[] | select(.status == "fail" or .status == "inconclusive" or .status == "error")
                    | .message' "$json" | tr -d ' \t' | cut -c1-40)
    [ "$n" -gt 0 ] || fail "$what: no finding to look for in the printed report"
    printed_findings=$n
}

# layout REPORT WHAT: at 1400 and 800 CSS pixels wide, the report read
# back from the rendered DOM by tests/html_layout.js (labels that overlap,
# are clipped, sit over data or stand for longer names; axes without a
# title or mixing units; what-changed bars off their one scale; tables
# that overflow or wrap identifiers) -- each problem a failure -- and a
# screenshot of the whole page at that width kept in $shots (the build
# folder's html-browser/, for a person to look at; a test artifact in CI).
# measure REPORT WIDTH: tests/html_layout.js on REPORT in a frame WIDTH
# px wide; $dom is PASS or FAIL and one problem a line, $height the
# page's height
measure() {
    local report=$1 w=$2
    { printf '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>layout</title></head><body style="margin:0">\n'
      printf '<pre id="layout">not run</pre>\n<pre id="height">0</pre>\n'
      printf '<iframe id="r" src="%s" style="border:0;width:%spx;height:900px"></iframe>\n<script>\n' "$(basename "$report")" "$w"
      cat "$root/tests/html_layout.js"
      printf '%s\n' 'const f = document.getElementById("r");' \
        'f.addEventListener("load", () => {' \
        '  let out;' \
        '  try { out = tgLayout(f.contentDocument); } catch (e) { out = {problems: ["harness: " + e], height: 0}; }' \
        '  document.getElementById("layout").textContent = out.problems.length ? "FAIL:\n" + out.problems.join("\n") : "PASS";' \
        '  document.getElementById("height").textContent = String(out.height);' \
        '});' '</script></body></html>'
    } > "$tmp/layout.html"
    chrome --allow-file-access-from-files --virtual-time-budget=10000 --window-size="$((w + 20)),1000" \
        --dump-dom "file://$tmp/layout.html" > "$tmp/layout.dom" 2>/dev/null
    dom=$(awk '/<pre id="layout">/ {on = 1} on {print} on && /<\/pre>/ {exit}' "$tmp/layout.dom" |
          sed 's/<[^>]*>//g; s/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g; s/&#39;/'"'"'/g; s/&quot;/"/g')
    height=$(sed -n 's|.*<pre id="height">\([0-9]*\)</pre>.*|\1|p' "$tmp/layout.dom")
}

layout() {
    local report=$1 what=$2 w png base
    base=$(basename "${report%.html}")
    for w in 1400 800; do
        measure "$report" "$w"
        if [ "$dom" != PASS ]; then
            fail "$what at $w px, the rendered layout:"
            printf '%s\n' "$dom" | grep -v '^FAIL:$' | head -40 | sed 's/^/    /'
        fi
        [ "${height:-0}" -gt 0 ] || { fail "$what at $w px: the layout harness did not measure the page"; continue; }
        [ "$height" -le 30000 ] || height=30000
        png="$shots/$base-$w.png"
        rm -f "$png"
        chrome --hide-scrollbars --virtual-time-budget=3000 --window-size="$w,$height" --screenshot="$png" \
            "file://$report" >/dev/null 2>&1
        # the PNG's width (bytes 17..20 of its IHDR) is the window's
        if [ "$(od -An -tu1 -j16 -N4 "$png" 2>/dev/null | awk '{print $1*16777216+$2*65536+$3*256+$4}')" != "$w" ]; then
            fail "$what at $w px: no screenshot $png of that width"
        else
            echo "     $what at $w px: screenshot $png (${height} px tall)"
        fi
    done
}

# layout_canary REPORT: the layout check sees what it looks for: a copy of
# REPORT with two labels drawn over each other and one past the edge of
# its first chart, and a rule id in a cell too narrow for it, must give
# those three problems.
layout_canary() {
    local report=$1 canary="${1%.html}-layout-canary.html" want
    sed -e '0,/<\/svg>/s|</svg>|<text x="300" y="40">canary</text><text x="304" y="42">canary</text><text x="860" y="40">canary past the edge</text></svg>|' \
        -e 's|<main>|<main><table><tbody><tr><td style="width:40px;max-width:40px"><code style="white-space:normal">gpu-time-regression</code></td></tr></tbody></table>|' \
        "$report" > "$canary"
    measure "$canary" 800
    for want in "labels overlap: 'canary' and 'canary'" "label 'canary past the edge' clipped" "identifier 'gpu-time-regression' wraps"; do
        printf '%s\n' "$dom" | grep -qF -- "$want" || fail "layout canary: the layout check did not report \"$want\" (it said: $(printf '%s' "$dom" | head -c 600))"
    done
    [ "$failures" = 0 ] && echo "ok   layout canary: planted overlapping, clipped and wrapping labels are reported"
}

# open REPORT WHAT VERDICT CHARTS GAP REPRODUCE [CANARY]: the checks above
# on one report; with CANARY (a page that must log), also that the console
# check sees its message
open_report() {
    local report=$1 what=$2 canary=${7:-} before=$failures
    harness "$report" "${report%.html}.json" "${@:3}"
    tg_browser_check "$what" "$report" "$canary"
    printed_findings=0
    printed "$report" "$what"
    layout "$report" "$what"
    [ "$failures" = "$before" ] &&
        echo "ok   $what ($(wc -c < "$report") bytes, $(grep -c '<svg' "$report") charts, ${pages:-0} printed pages, $printed_findings findings in the print)"
}

# 1. the bundled example against its baseline, one finding suppressed:
#    a cited gap on the timeline, SQL reproduce queries
printf 'version: 1\nsuppressions:\n  - {rule: iteration-variance, reason: the stall of the example}\n' > "$tmp/sup.yaml"
"$bin" check --baseline "$root/baselines/example.yaml" --suppress "$tmp/sup.yaml" \
    -o html="$tmp/example.html" -o json="$tmp/example.json" "$example" >/dev/null 2>&1
[ $? = 1 ] || fail "example: check did not exit 1"
grep -q 'class="badge suppressed">SUPPRESSED' "$tmp/example.html" || fail "example: the suppressed finding is not shown"
# the canary: the example's report with one outside image, which its CSP
# blocks with a console message
sed 's|<body>|<body><img src="http://127.0.0.1:9/tracegate-canary.png" alt="">|' "$tmp/example.html" > "$tmp/canary.html"
grep -q 'tracegate-canary.png' "$tmp/canary.html" || fail "example: the canary page was not made"
open_report "$tmp/example.html" "the bundled example" FAIL 3 true "SELECT" "$tmp/canary.html"
layout_canary "$tmp/example.html"

# 2. a failing baseline check on a real trace: the regressed run against
#    the two baseline runs (regressions, contributors, the band)
torch="$traces/h200-torch"
if [ -f "$torch/realistic_regressed.sqlite" ]; then
    "$bin" baseline record -o "$tmp/base.yaml" "$torch/realistic_baseline_run1.sqlite" \
        "$torch/realistic_baseline_run2.sqlite" 2>/dev/null || fail "real: baseline record failed"
    "$bin" check --baseline "$tmp/base.yaml" -o html="$tmp/regressed.html" -o json="$tmp/regressed.json" \
        "$torch/realistic_regressed.sqlite" >/dev/null 2>&1
    [ $? = 1 ] || fail "real: check did not exit 1"
    [ "$(jq -r '[.traces[0].results[] | select(.baseline.regression)] | length' "$tmp/regressed.json")" = 2 ] ||
        fail "real: not 2 regressions"
    grep -q 'class="band"' "$tmp/regressed.html" || fail "real: no baseline band drawn"
    grep -q 'What changed against the baseline' "$tmp/regressed.html" || fail "real: no contributor chart"
    open_report "$tmp/regressed.html" "realistic_regressed against its baseline" FAIL 5 false "SELECT"
    # 3. Kineto: the same charts, evidence reproduced with jq
    # -L: the corpus and folders in it may be symbolic links
    kineto=$(find -L "$traces/kineto/h200" -maxdepth 1 -name '*.json*' 2>/dev/null | sort | head -1)
    if [ -n "$kineto" ]; then
        "$bin" check -o html="$tmp/kineto.html" -o json="$tmp/kineto.json" "$kineto" >/dev/null 2>&1
        open_report "$tmp/kineto.html" "Kineto $(basename "$kineto")" "$(jq -r .status "$tmp/kineto.json" | tr a-z A-Z)" \
            1 false "traceEvents"
    else
        absent "no Kineto trace in $traces/kineto/h200: the Kineto report is not checked"
    fi
else
    absent "$torch/realistic_regressed.sqlite absent: the real-trace and Kineto reports are not checked (the example is)"
fi

if [ "$failures" = 0 ]; then echo "html_browser: all checks passed"; exit 0; fi
echo "html_browser: $failures checks failed"
exit 1
