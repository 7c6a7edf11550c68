// The HTML report's layout as a reader sees it (issue 34, item 3), read
// from the rendered DOM: tests/html_browser_test.sh inlines this file in a
// harness page that loads a report in a frame of a given width, calls
// tgLayout(document of the frame) and writes what it returns into the
// harness page, which `chromium --dump-dom` prints. Every check is on
// boxes the browser laid out (getBoundingClientRect), not on the markup:
//
// - charts: no label outside its chart (clipped), no two labels
//   overlapping, no label over a data mark (a point, a bar, a busy slice,
//   a gap); an x and a y axis title on every chart, one of them with a
//   unit in parentheses; the numeric labels of one axis (those on one
//   line or right-aligned in one column) in one unit, the unit of the
//   axis title; a shortened label ends with an ellipsis, is shorter than
//   the name it shortens and carries that name on hover (a <title>), and
//   no "(N bytes)" marker in a chart;
// - what changed: every bar as long as its change (the figure's table)
//   on the chart's axis, and every such chart of one trace on one scale;
// - tables (every <details> opened first): no cell whose content
//   overflows it, no table wider than its column, identifiers (a code
//   element without blanks, up to 64 characters: rule ids, file names)
//   on one line;
// - the page no wider than the window.
//
// Returns {problems: [...], height: the page's height in CSS pixels}.
"use strict";
function tgLayout(d) {
  const problems = [];
  const win = d.defaultView;
  const say = s => { if (problems.length < 60) problems.push(s); };
  const box = el => el.getBoundingClientRect();
  const shown = r => r.width > 0 && r.height > 0;
  // boxes overlapping by more than a sliver (glyph boxes include a little
  // air above and below the letters)
  const overlap = (a, b, tol) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > tol &&
                                 Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > tol;
  const own = t => [...t.childNodes].filter(n => n.nodeType === 3 || n.nodeName === "tspan")
                                    .map(n => n.textContent).join("").trim();
  const clip = s => s.length > 50 ? s.slice(0, 50) + "..." : s;
  const unitRe = /^[+\u2212-]?\d[\d.,]*\s*(ns|us|ms|s|min|h|B|KB|MB|GB|TB|B\/s|KB\/s|MB\/s|GB\/s|TB\/s|%)?$/;
  const scale = {ns: 1, us: 1e3, ms: 1e6, s: 1e9, min: 60e9, h: 3600e9};
  const valueOf = s => {   // "+1.59 ms" -> 1590000 (durations), or NaN
    const m = /^([+\u2212-]?)(\d[\d.]*)\s*(ns|us|ms|s|min|h)$/.exec(s.trim());
    return m ? (m[1] && m[1] !== "+" ? -1 : 1) * parseFloat(m[2]) * scale[m[3]] : NaN;
  };
  const titleUnit = t => { const m = /\(([^()]*)\)\s*$/.exec(own(t)); return m ? m[1] : null; };

  const closed = [...d.querySelectorAll("details")].filter(det => !det.open);
  for (const det of closed) det.open = true;

  // ------------------------------------------------------------ charts
  const changed = new Map();   // trace section -> [{fig, ppu}]
  for (const svg of d.querySelectorAll("svg[role=img]")) {
    const fig = svg.closest("figure");
    const name = (fig && fig.id) || "a chart";
    const sb = box(svg);
    if (!shown(sb)) { say(name + ": chart not laid out"); continue; }
    const texts = [...svg.querySelectorAll("text")].map(t => ({t, s: own(t), b: box(t)}))
                                                   .filter(x => x.s && shown(x.b));
    for (const x of texts) {
      if (x.b.left < sb.left - 0.5 || x.b.right > sb.right + 0.5 || x.b.top < sb.top - 0.5 || x.b.bottom > sb.bottom + 0.5)
        say(name + ": label '" + clip(x.s) + "' clipped by the chart's edge");
      if (/\(\d+ bytes\)/.test(x.s)) say(name + ": label '" + clip(x.s) + "' shows a cap marker, not a name");
      const title = x.t.querySelector("title");
      const full = title ? title.textContent.trim() : null;
      if (/\u2026$|\.\.\.$/.test(x.s)) {
        const stem = x.s.replace(/(\u2026|\.\.\.)$/, "");
        if (!full) say(name + ": shortened label '" + clip(x.s) + "' without the full name on hover");
        else if ([...x.s].length >= [...full].length || !full.startsWith(stem))
          say(name + ": label '" + clip(x.s) + "' is not a shorter form of '" + clip(full) + "'");
      } else if (full && full !== x.s && [...x.s].length >= [...full].length) {
        say(name + ": label '" + clip(x.s) + "' longer than the name it stands for");
      }
    }
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++)
        if (overlap(texts[i].b, texts[j].b, 1))
          say(name + ": labels overlap: '" + clip(texts[i].s) + "' and '" + clip(texts[j].s) + "'");
    const marks = [...svg.querySelectorAll("circle, rect.grew, rect.shrank, rect.busy, rect.gap")]
                    .map(m => ({m, b: box(m)})).filter(x => shown(x.b));
    for (const x of texts) {
      const hit = marks.find(m => overlap(x.b, m.b, 1));
      if (hit) say(name + ": label '" + clip(x.s) + "' drawn over a data mark (" + hit.m.tagName +
                   (hit.m.getAttribute("class") ? "." + hit.m.getAttribute("class").replace(/ /g, ".") : "") + ")");
    }
    // axis titles, and the unit of each axis
    const xt = svg.querySelector("text.axis-title.x"), yt = svg.querySelector("text.axis-title.y");
    if (!xt || !shown(box(xt))) say(name + ": no x-axis title");
    if (!yt || !shown(box(yt))) say(name + ": no y-axis title");
    if ((xt || yt) && !(xt && titleUnit(xt)) && !(yt && titleUnit(yt)))
      say(name + ": no axis title names a unit, as in 'period (ms)'");
    // numeric labels on one line (an x axis) or right-aligned in one
    // column (a y axis), three or more: one unit, that of the axis title
    const numeric = texts.filter(x => unitRe.test(x.s));
    const groups = [["x", x => Math.round(x.b.bottom)], ["y", x => Math.round(x.b.right)]];
    for (const [axis, key] of groups) {
      const by = new Map();
      for (const x of numeric) { const k = key(x); by.set(k, (by.get(k) || []).concat([x])); }
      for (const g of by.values()) {
        if (g.length < 3) continue;
        const units = [...new Set(g.map(x => unitRe.exec(x.s)[1] || ""))];
        const want = axis === "x" ? (xt && titleUnit(xt)) : (yt && titleUnit(yt));
        if (units.length > 1)
          say(name + ": the " + axis + " axis mixes units: " + g.map(x => x.s).join(", "));
        else if (want && units[0] && units[0] !== want && !(want === "%" && units[0] === "%"))
          say(name + ": " + axis + " tick labels in " + units[0] + ", the axis title says " + want);
      }
    }
    // what changed: bars against the figure's table of changes
    if (/-changed$/.test(name)) {
      const bars = [...svg.querySelectorAll("rect.grew, rect.shrank")];
      const rows = [...fig.querySelectorAll("table tbody tr")];
      const ticks = numeric.filter(x => x.t.classList.contains("x")).map(x => ({v: valueOf(x.s), c: (x.b.left + x.b.right) / 2}))
                           .filter(x => !isNaN(x.v));
      if (ticks.length < 2) { say(name + ": no value axis (two or more x ticks in a time unit)"); }
      let ppu = NaN;
      if (ticks.length >= 2) {
        const a = ticks[0], b = ticks[ticks.length - 1];
        ppu = (b.c - a.c) / (b.v - a.v);
      }
      let big = {v: 0, w: 0};
      bars.forEach((bar, k) => {
        const cells = rows[k] ? rows[k].querySelectorAll("td") : [];
        const v = cells.length ? valueOf(cells[cells.length - 1].textContent) : NaN;
        if (isNaN(v)) { say(name + ": bar " + (k + 1) + " has no change in the table"); return; }
        const w = box(bar).width;
        if (Math.abs(v) > Math.abs(big.v)) big = {v, w};
        if (!isNaN(ppu) && Math.abs(v) * ppu >= 2 && Math.abs(w - Math.abs(v) * ppu) > Math.max(1.5, 0.02 * w))
          say(name + ": bar " + (k + 1) + " is " + w.toFixed(1) + " px, its change " + cells[cells.length - 1].textContent +
              " is " + (Math.abs(v) * ppu).toFixed(1) + " px on the axis");
      });
      const sec = fig.closest("section") || d.body;
      if (big.v) changed.set(sec, (changed.get(sec) || []).concat([{name, ppu: big.w / Math.abs(big.v)}]));
    }
  }
  for (const charts of changed.values()) {
    const a = charts[0];
    for (const c of charts.slice(1))
      if (Math.abs(c.ppu - a.ppu) > 0.005 * a.ppu)
        say(a.name + " and " + c.name + ": the what-changed charts are on different scales (" +
            (a.ppu * 1e6).toFixed(2) + " and " + (c.ppu * 1e6).toFixed(2) + " px per ms)");
  }

  // ------------------------------------------------------------ tables
  for (const table of d.querySelectorAll("table")) {
    const tb = box(table);
    if (!shown(tb)) continue;
    const sec = table.closest("[id], section[aria-labelledby]");
    const where = sec ? sec.id || sec.getAttribute("aria-labelledby") : "?";
    const parent = table.parentElement, pb = box(parent);
    const pad = parseFloat(win.getComputedStyle(parent).paddingRight) || 0;
    if (tb.right > pb.right - pad + 1)
      say("table in #" + where + " is " + tb.width.toFixed(0) + " px, wider than its column (" +
          (pb.right - pad - tb.left).toFixed(0) + " px)");
    for (const cell of table.querySelectorAll("td, th")) {
      if (cell.scrollWidth > cell.clientWidth + 1)
        say("table in #" + where + ": cell '" + clip(cell.textContent.trim()) + "' overflows its column (" +
            cell.scrollWidth + " px in " + cell.clientWidth + ")");
    }
    for (const code of table.querySelectorAll("td code")) {
      const s = code.textContent;
      if (/^\S{1,64}$/.test(s) && code.getClientRects().length > 1)
        say("table in #" + where + ": identifier '" + s + "' wraps over " + code.getClientRects().length + " lines");
    }
  }
  const de = d.documentElement;
  if (de.scrollWidth > de.clientWidth + 1)
    say("the page is " + de.scrollWidth + " px wide in a " + de.clientWidth + " px window");
  for (const det of closed) det.open = false;
  return {problems, height: Math.ceil(de.scrollHeight)};
}
