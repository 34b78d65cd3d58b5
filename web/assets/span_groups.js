// The spans an attempt's answer summarised instead of listing (docs/trace-view-api.md, "Large
// attempts"): past --view-max-spans, e.g. tens of thousands of one-call traces of a client that sends
// no traceparent. One row per lane and name: how many, how many failed, how busy, and a density strip
// of when they started (the answer counts starts in equal slices of the attempt's window).

import { h, s } from './dom.js';
import { formatCount, formatDuration } from './format.js';

// The bars of a density strip `width` x `height` wide: one per non-empty slice, as tall as its share
// of the fullest slice (at least 1 px, so that a single call shows). Pure, for the tests.
export function densityBars(starts, width, height) {
  const counts = Array.isArray(starts) ? starts : [];
  const most = counts.reduce((a, b) => Math.max(a, b), 0);
  if (counts.length === 0 || most <= 0) return [];
  const slice = width / counts.length;
  const bars = [];
  counts.forEach((count, i) => {
    if (!(count > 0)) return;
    const tall = Math.max(1, Math.round((count / most) * height));
    bars.push({ x: i * slice, y: height - tall, width: Math.max(slice - 0.5, 0.5), height: tall, count });
  });
  return bars;
}

// "Listing 20,000 of 48,123 spans; 28,123 summarised below (--view-max-spans 20,000)", or null when the
// answer lists them all (or comes from a server without the bound).
export function boundSentence(bound) {
  if (!bound || !(bound.summarised > 0)) return null;
  return `Listing ${formatCount(bound.listed)} of ${formatCount(bound.total)} spans; `
    + `${formatCount(bound.summarised)} summarised below (--view-max-spans ${formatCount(bound.max_spans)}).`;
}

const WIDTH = 360;
const HEIGHT = 18;

function groupRow(group) {
  const bars = densityBars(group.buckets?.starts, WIDTH, HEIGHT);
  const strip = s('svg', { class: 'span-group-strip', viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, role: 'img',
    'aria-label': `${formatCount(group.count)} starts over the attempt` },
  bars.map((bar) => s('rect', { x: bar.x, y: bar.y, width: bar.width, height: bar.height })));
  return h('tr', null,
    h('td', null, group.label || group.name, h('span', { class: 'muted' }, ` \u00b7 ${group.lane}`)),
    h('td', { class: 'num' }, formatCount(group.count)),
    h('td', { class: 'num' }, group.error_count > 0 ? formatCount(group.error_count) : '\u2013'),
    h('td', { class: 'num' }, formatDuration(group.busy_ms)),
    h('td', null, strip));
}

// The card, or null when nothing was summarised.
export function renderSpanGroups(attempt) {
  const sentence = boundSentence(attempt.span_bound);
  if (sentence === null) return null;
  const groups = attempt.span_groups ?? [];
  return h('section', { class: 'card span-groups-card', 'aria-labelledby': 'span-groups-title' },
    h('div', { class: 'card-head' }, h('h2', { id: 'span-groups-title' }, 'Summarised spans'),
      h('span', { class: 'muted' }, sentence)),
    h('table', { class: 'data-table span-groups' },
      h('thead', null, h('tr', null, h('th', null, 'span'), h('th', { class: 'num' }, 'count'),
        h('th', { class: 'num' }, 'failed'), h('th', { class: 'num' }, 'busy'), h('th', null, 'starts over the attempt'))),
      h('tbody', null, groups.map(groupRow))));
}
