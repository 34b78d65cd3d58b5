// Geometry of the Gantt chart: time <-> x, zoom windows, axis ticks, and which rows of a long list
// are on screen. Pure functions over numbers; times are ms since the attempt's start.

// How much one step of the zoom buttons and +/- keys zooms.
export const ZOOM_STEP = 1.6;

// Narrowest window one can zoom to: a tenth of a millisecond, or 1/100000 of the whole.
export function minWindowMs(totalMs) {
  return Math.max(0.1, totalMs / 100000);
}

// The linear map of the window [from, to] onto [0, width] px.
export function makeScale(from, to, width) {
  const span = to - from > 0 ? to - from : 1;
  const k = width / span;
  return {
    from, to, width,
    x: (t) => (t - from) * k,
    t: (x) => from + x / k,
    pxPerMs: k,
  };
}

// A window kept inside [0, total] and no narrower than the minimum, its width kept when it can be.
export function clampWindow(from, to, totalMs) {
  const total = Math.max(totalMs, 0);
  const min = minWindowMs(total);
  let width = Math.min(Math.max(to - from, min), total || min);
  let start = Math.min(Math.max(from, 0), Math.max(total - width, 0));
  if (!Number.isFinite(start)) start = 0;
  if (!Number.isFinite(width) || width <= 0) width = total || min;
  return { from: start, to: start + width };
}

// Zoom by `factor` (> 1 zooms in) keeping the instant `anchor` where it is on screen.
export function zoomWindow(window, factor, anchor, totalMs) {
  const width = (window.to - window.from) / factor;
  const ratio = (anchor - window.from) / (window.to - window.from || 1);
  const from = anchor - ratio * width;
  return clampWindow(from, from + width, totalMs);
}

export function panWindow(window, deltaMs, totalMs) {
  return clampWindow(window.from + deltaMs, window.to + deltaMs, totalMs);
}

export function isFullWindow(window, totalMs) {
  return window.from <= 0 && window.to >= totalMs;
}

// The part of [start, end] visible in the scale's window, in px, or null when it is outside.
// Bars keep at least `minWidth` px so that sub-pixel spans still show.
export function barExtent(start, end, scale, minWidth = 1) {
  if (end < scale.from || start > scale.to) return null;
  const x0 = Math.max(scale.x(start), 0);
  const x1 = Math.min(scale.x(end), scale.width);
  const clippedLeft = start < scale.from;
  const clippedRight = end > scale.to;
  return { x: x0, width: Math.max(x1 - x0, minWidth), clippedLeft, clippedRight };
}

const TICK_STEPS_MS = [
  0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5,
  1, 2, 5, 10, 20, 50, 100, 200, 500,
  1000, 2000, 5000, 10000, 15000, 30000,
  60000, 120000, 300000, 600000, 900000, 1800000,
  3600000, 7200000, 10800000, 21600000, 43200000, 86400000,
];

// Tick positions for the window: round steps (1-2-5 below a second, then 1 s, 5 s, 15 s, 1 min,
// 5 min, 15 min, 1 h, ...), at most about `maxTicks` of them.
export function niceTicks(from, to, maxTicks = 8) {
  const span = to - from;
  if (!(span > 0) || maxTicks < 1) return { step: 0, ticks: [] };
  const wanted = span / maxTicks;
  const step = TICK_STEPS_MS.find((s) => s >= wanted * (1 - 1e-9)) ?? Math.ceil(wanted / 86400000) * 86400000;
  const ticks = [];
  const first = Math.ceil(from / step - 1e-9);
  for (let i = first; i * step <= to + step * 1e-9; i += 1) {
    ticks.push(Math.round(i * step * 1e6) / 1e6 + 0);  // no 0.30000000000000004, no -0
  }
  return { step, ticks };
}

// Rows [first, last) to draw for a scroll position, with `overscan` extra rows each side so that a
// fast scroll does not flash empty rows.
export function visibleRowRange(scrollTop, viewportHeight, rowHeight, rowCount, overscan = 6) {
  if (rowCount <= 0 || rowHeight <= 0) return { first: 0, last: 0 };
  const top = Math.max(scrollTop, 0);
  const first = Math.max(Math.floor(top / rowHeight) - overscan, 0);
  const last = Math.min(Math.ceil((top + Math.max(viewportHeight, 0)) / rowHeight) + overscan, rowCount);
  return { first: Math.min(first, last), last };
}

// The scrollTop that shows row `index` (unchanged when it is already fully visible).
export function scrollTopToShow(index, scrollTop, viewportHeight, rowHeight) {
  const top = index * rowHeight;
  const bottom = top + rowHeight;
  if (top < scrollTop) return top;
  if (bottom > scrollTop + viewportHeight) return Math.max(bottom - viewportHeight, 0);
  return scrollTop;
}

// A step function [{t_ms, count}] (epoch ms) as an SVG path "M..H..V.." over the scale, with the
// count on a y axis of `height` px where `max` is at the top. Points before the window collapse
// onto its left edge; the last step runs to `endT` (ms since start).
export function stepPath(series, startEpochMs, endT, scale, height, max) {
  if (!series.length || !(max > 0)) return '';
  const y = (count) => Math.round((height - (Math.min(count, max) / max) * (height - 2)) * 10) / 10;
  const x = (t) => Math.round(Math.min(Math.max(scale.x(t), 0), scale.width) * 10) / 10;
  let d = '';
  let lastY = null;
  for (let i = 0; i < series.length; i += 1) {
    const t = series[i].t_ms - startEpochMs;
    const next = i + 1 < series.length ? series[i + 1].t_ms - startEpochMs : endT;
    if (next < scale.from && i + 1 < series.length) continue;  // wholly before the window
    if (t > scale.to) break;
    const py = y(series[i].count);
    if (d === '') {
      d = `M${x(t)},${py}`;
    } else {
      d += `H${x(t)}V${py}`;
    }
    lastY = py;
  }
  if (d !== '' && lastY !== null) d += `H${x(endT)}`;
  return d;
}
