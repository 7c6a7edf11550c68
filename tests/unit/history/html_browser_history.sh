#!/usr/bin/env bash
# history report's page in a real browser (issue 30), as
# tests/html_browser_test.sh does for the check report: headless Chromium
# opens the pages test_trend_html writes (its --write DIR: the fixture view
# of two workloads with a regression, an improvement and accepted change
# points; and a view of 1,000 runs x 20 metrics) and
#
# - logs nothing for them (no script error, no blocked or failed load: the
#   page's Content-Security-Policy turns any outside reference into a
#   console message); a canary, the fixture page with one outside image,
#   must log the CSP's message, so that the check is seen to see;
# - a harness page that loads each in a frame (--dump-dom prints its
#   verdict) finds what a reader needs: one SVG chart per series with a
#   value, visible, inside the page, with a title, a description and a
#   caption; the values, the runs and the bands drawn; one marker per
#   change point, spanning the plot and linking to its explanation (the
#   medians, the change, p); in the fixture the regression explained with
#   its contributor, its marker on the first run after the change, the
#   accepted reason (which holds <script>) shown as text, the regression
#   not accepted first in the summary, a marker taking keyboard focus;
#   every link to an id of the page, and nothing from outside;
# - a screenshot of the fixture page is a PNG with far more drawn than a
#   blank page of the same size.
#
# Without Chromium, or when it cannot start, the test is skipped (exit 77)
# with the reason (tests/browser.sh; in the project's CI, tests/require.sh,
# a skip fails). Usage: html_browser_history.sh PAGE_WRITER
set -uo pipefail
writer="$1"
root="$TG_SOURCE_ROOT"
# shellcheck source=tests/require.sh
. "$root/tests/require.sh"
# shellcheck source=tests/browser.sh
. "$root/tests/browser.sh"
tg_browser_find history_html_browser
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tg_browser_start history_html_browser
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

"$writer" --write "$tmp" || { echo "FAILED: $writer --write $tmp did not write the pages"; exit 1; }
# what the fixture holds (test_trend_html.c's write_pages)
series="" charts="" changes="" accepted="" large_charts="" large_changes="" explain="" kernel=""
# shellcheck source=/dev/null
. "$tmp/expect.sh"
if [ -z "$series" ] || [ -z "$explain" ]; then echo "FAILED: $tmp/expect.sh does not say what the fixture holds"; exit 1; fi

# harness PAGE CHARTS CHANGES LARGE [CANARY]: the checks above, in script,
# on PAGE loaded in a frame; PASS or what failed into #result
harness() {
    local page=$1 charts=$2 changes=$3 large=$4 canary=${5:-}
    cat > "$tmp/check.html" <<HTML
<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>harness</title></head><body>
<pre id="result">not run</pre>
<iframe id="r" src="$(basename "$page")" style="width:1280px;height:900px"></iframe>
${canary:+<iframe id="c" src="$(basename "$canary")" style="width:200px;height:100px"></iframe>}
<script>
const want = {charts: $charts, changes: $changes, large: $large, accepted: $accepted,
              explain: $(printf '%s' "$explain" | jq -Rs .), kernel: $(printf '%s' "$kernel" | jq -Rs .)};
const bad = [];
const need = (cond, what) => { if (!cond) bad.push(what); };
function visible(el) {
  if (!el) return false;
  const r = el.getBoundingClientRect(), s = el.ownerDocument.defaultView.getComputedStyle(el);
  return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none";
}
function charts(d) {
  const svgs = [...d.querySelectorAll("svg[role=img]")], width = d.documentElement.clientWidth;
  need(svgs.length === want.charts, "charts " + svgs.length + ", want " + want.charts);
  for (const svg of svgs) {
    const fig = svg.closest("figure"), name = fig ? fig.id : "a chart outside a figure";
    need(visible(svg) && svg.getBoundingClientRect().right <= width + 1, "chart visible inside the page: " + name);
    const ids = (svg.getAttribute("aria-labelledby") || "").split(" ");
    const title = d.getElementById(ids[0]), desc = d.getElementById(ids[1]);
    need(title && title.tagName === "title" && title.textContent.length > 0, "chart title: " + name);
    need(desc && desc.tagName === "desc" && desc.textContent.includes(" runs from "), "chart description: " + name);
    need(fig && fig.querySelector("figcaption"), "figure caption: " + name);
    const line = svg.querySelector("path.series");
    need(line && line.getTotalLength() > 0, "the values drawn: " + name);
    need(svg.querySelectorAll(want.large ? "path.dots" : "circle.pt").length > 0, "the runs drawn: " + name);
    if (want.large) {
      const hits = svg.querySelectorAll("rect.hit").length;
      need(hits > 0 && hits <= 150, "tooltips over slices of runs: " + hits + " in " + name);
    }
  }
  const bands = [...d.querySelectorAll("svg path.band")];
  need(bands.length > 0 && bands.every(visible), "baseline bands drawn: " + bands.length);
  const markers = [...d.querySelectorAll("svg a[href^='#s'] > line.cpl")];
  need(markers.length === want.changes, "change-point markers " + markers.length + ", want " + want.changes);
  for (const m of markers) {
    const id = m.parentElement.getAttribute("href").slice(1), art = d.getElementById(id);
    need(art && art.tagName === "ARTICLE" && art.classList.contains("change"), "marker " + id + " leads to its explanation");
    need(art && /Median .+ \u2192 .+ \(.+%\), p = \d/.test(art.textContent), "explanation " + id + ": medians, change, p");
    need(m.getBoundingClientRect().height > 100, "marker " + id + " spans the plot");
  }
  need(d.querySelectorAll("svg line.cpl.accepted").length === want.accepted,
       "accepted markers " + d.querySelectorAll("svg line.cpl.accepted").length + ", want " + want.accepted);
}
function fixture(d) {
  const art = d.getElementById("s2-c1");
  need(art && art.textContent.includes(want.explain), "the regression explained: " + (art && art.textContent.slice(0, 300)));
  need(art && [...art.querySelectorAll("td code")].some(c => c.textContent === want.kernel), "its contributor named");
  const svg = d.querySelector("#s2 svg"), a = svg && svg.querySelector("a[href='#s2-c1']");
  const pt = svg && [...svg.querySelectorAll("circle")].find(c => c.textContent.startsWith("run 13:"));
  need(a && pt && Math.abs(pt.cx.baseVal.value - a.querySelector("line").x1.baseVal.value) < 0.5,
       "the marker on the first run after the change (run 13)");
  need(d.body.textContent.includes('<script>alert("x")<\/script>'), "the accepted reason shown as text");
  const first = d.querySelector("#summary ~ table tbody tr");
  need(first && first.textContent.startsWith("REGRESSION") && !first.textContent.includes("ACCEPTED"),
       "the regression not accepted first: " + (first && first.textContent));
  if (a) { a.focus(); need(d.activeElement === a, "a change-point marker takes keyboard focus"); }
}
function check(d) {
  need(d.documentElement.lang === "en" && d.title.startsWith("tracegate: "), "html lang and title: " + d.title);
  need(d.querySelector("main") && d.querySelector("header") && d.querySelector("nav"), "landmarks");
  need(visible(d.querySelector(".verdict")), "the state of the history shown");
  charts(d);
  if (!want.large) fixture(d);
  for (const a of d.querySelectorAll("a[href^='#']"))
    need(d.getElementById(a.getAttribute("href").slice(1)), "link target " + a.getAttribute("href"));
  need(!d.querySelector("script, link, iframe, object, embed, img, image"), "no script or outside resource");
  for (const el of d.querySelectorAll("[src], [href], [srcset]")) {
    const v = el.getAttribute("src") || el.getAttribute("href") || el.getAttribute("srcset") || "";
    need(v.startsWith("#"), "outside reference: " + v);
  }
  need(![...d.querySelectorAll("style")].some(s => /url\(|@import/.test(s.textContent)), "style loads nothing");
}
document.getElementById("r").addEventListener("load", () => {
  try { check(document.getElementById("r").contentDocument); } catch (e) { bad.push("harness: " + e); }
  document.getElementById("result").textContent = bad.length ? "FAIL: " + bad.join(" | ") : "PASS";
});
</script></body></html>
HTML
}

# open PAGE WHAT CHARTS CHANGES LARGE [CANARY]
open_page() {
    local page=$1 what=$2 canary=${6:-} before=$failures
    harness "$page" "$3" "$4" "$5" "$canary"
    tg_browser_check "$what" "$page" "$canary"
    [ "$failures" = "$before" ] &&
        echo "ok   $what ($(wc -c < "$page") bytes, $(grep -c '<svg' "$page") charts, $4 change points)"
}

sed 's|<body>|<body><img src="http://127.0.0.1:9/tracegate-canary.png" alt="">|' "$tmp/trend.html" > "$tmp/canary.html"
grep -q 'tracegate-canary.png' "$tmp/canary.html" || fail "the canary page was not made"
open_page "$tmp/trend.html" "the fixture history" "$charts" "$changes" false "$tmp/canary.html"
accepted=0
open_page "$tmp/large.html" "1,000 runs x 20 metrics" "$large_charts" "$large_changes" true

# the screenshot: a PNG, with far more drawn than on a blank page
printf '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>blank</title></head><body></body></html>' \
    > "$tmp/blank.html"
for p in trend blank; do
    chrome --window-size=1280,2400 --screenshot="$tmp/$p.png" "file://$tmp/$p.html" >/dev/null 2>&1
done
if [ "$(head -c 8 "$tmp/trend.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
    fail "the screenshot of the fixture page is not a PNG"
else
    page_png=$(wc -c < "$tmp/trend.png") blank_png=$(wc -c < "$tmp/blank.png" 2>/dev/null || echo 0)
    if [ "$page_png" -gt $((blank_png * 5)) ]; then
        echo "ok   screenshot: $page_png bytes of PNG, a blank page $blank_png"
    else
        fail "the screenshot of the fixture page ($page_png bytes) is hardly more than a blank page's ($blank_png)"
    fi
fi

if [ "$failures" = 0 ]; then echo "history_html_browser: all checks passed"; exit 0; fi
echo "history_html_browser: $failures checks failed"
exit 1
