"""What the HTML check (:mod:`replicate.book.check`) measures of a page's layout, in the browser.

:data:`LAYOUT_JS` runs in a loaded page of the built book, at the check's window of
:data:`VIEWPORT` (1280 x 800 CSS px: the desktop layout of sphinx-book-theme, with the
navigation panel on the left and the page's table of contents, the *side panel*, on the
right). It first unfolds every folded block (solutions, hidden cells), so that it measures
the page as a reader who opens them sees it, and returns lists of one-line findings:

``truncated`` a table cell whose text ends in "..." or "…", or that CSS cuts with an ellipsis;
``overflow``  a table whose right (or left) edge passes the page's content column, or runs
              under the side panel, and that does not sit in a scroll box of its own (an
              element with ``overflow-x: auto`` or ``scroll`` that itself fits the column).
              The column is the article; a full-width cell may use the window, less the
              side panel where one is shown. A scroll box taller than the window is
              reported too: its horizontal scroll bar is out of reach while the reader
              reads the table's top;
``crowded``   two numbers of neighbouring cells of a table row closer than 4 px;
``overlap``   two text boxes of the page that overlap: two visible lines of text of
              different elements whose rectangles share more than :data:`OVERLAP_PX` px
              in both directions (text clipped by a scroll box counts only where it shows;
              math, whose glyphs are not text, and code are left out);
``alt``       an image of the page's article with no alt text that describes it: none, a
              file name or path (Sphinx's default for a notebook output), matplotlib's
              ``<Figure size ...>`` or fewer than :data:`MIN_ALT_WORDS` words. An image
              marked decorative (``role="presentation"`` or ``aria-hidden="true"``) and the
              theme's icons (files under ``_static/``, e.g. the module index's "-" toggle)
              are left alone.

This module imports nothing; it only holds the scripts.
"""
from __future__ import annotations

#: The browser window the check loads every page in (CSS px).
VIEWPORT = {"width": 1280, "height": 800}
#: Two text boxes overlap when they share more than this many px both ways.
OVERLAP_PX = 2
#: An alt text shorter than this many words does not describe a figure.
MIN_ALT_WORDS = 4

__all__ = ["VIEWPORT", "OVERLAP_PX", "MIN_ALT_WORDS", "LAYOUT_JS"]

LAYOUT_JS = r"""
async () => {
  const OVERLAP_PX = %(overlap)s, MIN_ALT_WORDS = %(words)s;
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const snippet = s => s.replace(/\s+/g, ' ').trim().slice(0, 80);
  const main = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const col = main.getBoundingClientRect();
  const page = document.documentElement.clientWidth;
  const side = document.querySelector('.bd-sidebar-secondary');
  const sideBox = side && side.getBoundingClientRect();
  const sideLeft = sideBox && sideBox.width > 0 && getComputedStyle(side).visibility !== 'hidden'
    && sideBox.left > col.left ? sideBox.left : page;
  const limit = e => e.closest('.tag_full-width, .full-width') ? {left: 0, right: Math.min(page, sideLeft)}
                                                                : {left: col.left, right: Math.min(col.right, sideLeft)};
  const fits = (r, lim) => r.left >= lim.left - 1 && r.right <= lim.right + 1;
  const cells = [...main.querySelectorAll('td, th')].filter(c => !c.closest('pre, code, script, style'));
  const truncated = [];
  for (const c of cells) {
    const t = c.textContent.replace(/\s+/g, ' ').trim();
    const cs = getComputedStyle(c);
    if (/(\.\.\.|…)$/.test(t) || (cs.textOverflow === 'ellipsis' && c.scrollWidth > c.clientWidth + 1))
      truncated.push(snippet(t.slice(-60)));
  }
  const overflow = [];
  for (const t of main.querySelectorAll('table')) {
    const b = t.getBoundingClientRect();
    if (!b.width) continue;
    // a table laid out as a block may be narrower than the rows it holds: measure the rows
    const r = {left: b.left, right: b.left + Math.max(b.width, t.scrollWidth), width: Math.max(b.width, t.scrollWidth)};
    const lim = limit(t);
    if (fits(r, lim)) continue;
    let boxed = null;
    for (let e = t; e && e !== main.parentElement; e = e.parentElement) {
      const ox = getComputedStyle(e).overflowX;
      if ((ox === 'auto' || ox === 'scroll') && fits(e.getBoundingClientRect(), limit(e))) { boxed = e; break; }
    }
    if (boxed) {
      const h = boxed.getBoundingClientRect().height;
      if (boxed.scrollWidth > boxed.clientWidth + 1 && h > window.innerHeight)
        overflow.push(`${Math.round(r.width)} px wide in a scroll box ${Math.round(h)} px tall: its scroll bar lies `
                      + `below a ${window.innerHeight}-px window when its top is in view: ` + snippet(t.textContent));
      continue;
    }
    const where = r.right > sideLeft + 1 ? `runs ${Math.round(r.right - sideLeft)} px under the side panel`
                                         : `in a ${Math.round(lim.right - lim.left)}-px column`;
    overflow.push(`${Math.round(r.width)} px wide ${where}: ` + snippet(t.textContent));
  }
  const numeric = /^[-+−–]?\(?[0-9][0-9.,]*\)?%%?$/;
  const textBox = c => { const g = document.createRange(); g.selectNodeContents(c);
    const rs = [...g.getClientRects()].filter(q => q.width > 0); return rs.length ? rs : null; };
  const crowded = [];
  for (const row of main.querySelectorAll('tr')) {
    const cs = [...row.children].filter(c => c.getBoundingClientRect().width > 0);
    for (let i = 1; i < cs.length; i++) {
      const a = cs[i - 1].textContent.trim(), b = cs[i].textContent.trim();
      const aw = a.split(/\s+/).pop(), bw = b.split(/\s+/)[0];
      if (!numeric.test(aw) || !numeric.test(bw)) continue;
      const ra = textBox(cs[i - 1]), rb = textBox(cs[i]);
      if (!ra || !rb) continue;
      const last = ra[ra.length - 1], first = rb[0];
      if (Math.abs(last.top - first.top) < last.height / 2 && first.left - last.right < 4)
        crowded.push(`${aw} | ${bw} (${(first.left - last.right).toFixed(1)} px apart)`);
    }
  }
  // text boxes: one rectangle per line of each visible text node, clipped to its scroll boxes
  const SKIP = 'pre, code, script, style, textarea, mjx-container, .highlight, svg';
  const clipOf = new Map();
  const clip = el => {
    if (clipOf.has(el)) return clipOf.get(el);
    let box = {left: -1e9, top: -1e9, right: 1e9, bottom: 1e9};
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
        const q = e.getBoundingClientRect();
        box = {left: Math.max(box.left, q.left), top: Math.max(box.top, q.top),
               right: Math.min(box.right, q.right), bottom: Math.min(box.bottom, q.bottom)};
      }
    }
    clipOf.set(el, box);
    return box;
  };
  const visible = el => !el.checkVisibility || el.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const boxes = [];
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || !n.textContent.trim() || el.closest(SKIP) || !visible(el)) continue;
    const g = document.createRange(); g.selectNodeContents(n);
    const c = clip(el);
    for (const q of g.getClientRects()) {
      const b = {left: Math.max(q.left, c.left), top: Math.max(q.top, c.top),
                 right: Math.min(q.right, c.right), bottom: Math.min(q.bottom, c.bottom), el, text: n.textContent};
      if (b.right - b.left > OVERLAP_PX && b.bottom - b.top > OVERLAP_PX) boxes.push(b);
    }
  }
  boxes.sort((a, b) => a.top - b.top);
  const overlap = [];
  for (let i = 0; i < boxes.length && overlap.length < 20; i++) {
    const a = boxes[i];
    for (let j = i + 1; j < boxes.length && boxes[j].top < a.bottom - OVERLAP_PX; j++) {
      const b = boxes[j];
      if (a.el === b.el || a.el.contains(b.el) || b.el.contains(a.el)) continue;
      const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (dx > OVERLAP_PX && dy > OVERLAP_PX)
        overlap.push(`${JSON.stringify(snippet(a.text).slice(0, 40))} and ${JSON.stringify(snippet(b.text).slice(0, 40))}`
                     + ` (${Math.round(dx)} x ${Math.round(dy)} px)`);
    }
  }
  const alt = [];
  const images = [...main.querySelectorAll('img')];
  for (const [i, img] of images.entries()) {
    if (img.getAttribute('role') === 'presentation' || img.getAttribute('aria-hidden') === 'true') continue;
    if (/(^|\/)_static\//.test(img.getAttribute('src') || '')) continue;   // the theme's icons, not figures
    const a = (img.getAttribute('alt') || '').trim();
    const src = img.getAttribute('src') || '';
    const file = src.split('/').pop();
    const words = a.split(/\s+/).filter(w => /[a-z]/i.test(w)).length;
    let why = null;
    if (!a) why = 'no alt text';
    else if (a === src || a.endsWith(file) || /\.(png|jpe?g|gif|svg|webp)$/i.test(a)) why = 'the alt text is a file name';
    else if (/^<Figure size/.test(a)) why = "the alt text is matplotlib's repr";
    else if (words < MIN_ALT_WORDS) why = `the alt text has ${words} word(s)`;
    if (why) alt.push(`${why}: image ${i + 1} of ${images.length}, ${file || '(no src)'}${a ? ' (alt ' + JSON.stringify(snippet(a).slice(0, 40)) + ')' : ''}`);
  }
  return {truncated, overflow, crowded, overlap, alt};
}
""" % {"overlap": OVERLAP_PX, "words": MIN_ALT_WORDS}
