// The Gantt's header strips: the overview (the whole attempt's phases and executor count, with a
// brush for the zoom window), and the time axis with the breakdown's phase strip under its ticks.

import { s, clear } from './dom.js';
import { makeScale, niceTicks, stepPath, barExtent } from './gantt_layout.js';
import { formatTick } from './format.js';
import { PATTERNED_PHASES } from './patterns.js';

const OVERVIEW_HEIGHT = 30;
const AXIS_HEIGHT = 30;
const STRIP_Y = 19;
const STRIP_H = 9;

// Phase intervals (epoch ms) as rects in [y, y + height], merged where they would be narrower than
// half a pixel: a 20,000-span attempt has thousands of intervals and the strip needs only pixels.
function phaseRects(intervals, startEpochMs, scale, y, height) {
  const out = [];
  let pending = null;
  const flush = () => {
    if (!pending) return;
    const rect = s('rect', { class: `fill-${pending.phase}`, x: pending.x, y, width: pending.w, height });
    out.push(rect);
    if (PATTERNED_PHASES.includes(pending.phase)) out.push(s('rect', { fill: `url(#pat-${pending.phase})`, x: pending.x, y, width: pending.w, height }));
    pending = null;
  };
  for (const interval of intervals) {
    const extent = barExtent(interval.start_ms - startEpochMs, interval.end_ms - startEpochMs, scale, 0);
    if (!extent || extent.width <= 0) continue;
    if (pending && pending.phase === interval.phase && Math.abs(pending.x + pending.w - extent.x) < 0.5) {
      pending.w = extent.x + extent.width - pending.x;
      continue;
    }
    if (pending && extent.width < 0.5 && pending.x + pending.w >= extent.x - 0.5) continue;  // sub-pixel: keep the wider neighbour
    flush();
    pending = { phase: interval.phase, x: extent.x, w: extent.width };
  }
  flush();
  return out;
}

export function createOverview() {
  return s('svg', {
    class: 'overview', role: 'img', height: OVERVIEW_HEIGHT,
    'aria-label': 'Overview of the whole attempt: phases over time and the executor count. Drag to choose the time window.',
  });
}

// The static part (phases, executor outline), drawn for the whole attempt.
export function drawOverview(svg, attempt, width) {
  clear(svg);
  svg.setAttribute('width', width);
  svg.setAttribute('viewBox', `0 0 ${width} ${OVERVIEW_HEIGHT}`);
  const scale = makeScale(0, attempt.wall_ms, width);
  const base = s('g', { class: 'ov-base' }, phaseRects(attempt.breakdown.intervals, attempt.start_ms, scale, 4, OVERVIEW_HEIGHT - 8));
  const ex = attempt.executors;
  if (ex?.known && ex.series?.length) {
    base.append(s('path', { class: 'ov-exec', d: stepPath(ex.series, attempt.start_ms, attempt.wall_ms, scale, OVERVIEW_HEIGHT - 6, Math.max(ex.max, 1)) }));
  }
  svg.append(base, s('g', { class: 'ov-brush' }));
}

// The brush for the zoom window [from, to] (ms since start).
export function drawBrush(svg, window, totalMs, width) {
  const layer = svg.querySelector('.ov-brush');
  if (!layer) return;
  clear(layer);
  const scale = makeScale(0, totalMs, width);
  const x0 = Math.max(scale.x(window.from), 0);
  const x1 = Math.min(Math.max(scale.x(window.to), x0 + 2), width);
  layer.append(
    s('rect', { class: 'shade', x: 0, y: 0, width: x0, height: OVERVIEW_HEIGHT }),
    s('rect', { class: 'shade', x: x1, y: 0, width: Math.max(width - x1, 0), height: OVERVIEW_HEIGHT }),
    s('rect', { class: 'brush', x: x0, y: 1, width: x1 - x0, height: OVERVIEW_HEIGHT - 2, dataset: { part: 'window' } }),
    s('rect', { class: 'handle', x: x0 - 2, y: 8, width: 4, height: OVERVIEW_HEIGHT - 16, dataset: { part: 'left' } }),
    s('rect', { class: 'handle', x: x1 - 2, y: 8, width: 4, height: OVERVIEW_HEIGHT - 16, dataset: { part: 'right' } }));
}

export function createAxis() {
  return s('svg', { class: 'axis', role: 'img', height: AXIS_HEIGHT });
}

// Ticks for the window and the phase strip. Answers the ticks, for the grid lines under the bars.
export function drawAxis(svg, attempt, scale) {
  clear(svg);
  const width = scale.width;
  svg.setAttribute('width', width);
  svg.setAttribute('viewBox', `0 0 ${width} ${AXIS_HEIGHT}`);
  const { step, ticks } = niceTicks(scale.from, scale.to, Math.max(Math.floor(width / 90), 2));
  for (const t of ticks) {
    const x = scale.x(t);
    svg.append(s('line', { class: 'tick-line', x1: x, x2: x, y1: 12, y2: STRIP_Y }));
    const anchor = x < 20 ? 'start' : x > width - 30 ? 'end' : 'middle';
    svg.append(s('text', { class: 'tick-text', x: x + (anchor === 'start' ? 2 : 0), y: 10, 'text-anchor': anchor }, formatTick(t, step)));
  }
  svg.append(...phaseRects(attempt.breakdown.intervals, attempt.start_ms, scale, STRIP_Y, STRIP_H));
  svg.append(s('g', { class: 'axis-drag' }));
  svg.setAttribute('aria-label',
    `Time since the attempt started, ${formatTick(scale.from, step)} to ${formatTick(scale.to, step)}, with the phase of each instant as a strip. Drag to zoom.`);
  return ticks;
}
