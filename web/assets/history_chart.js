// History of this task: stacked phase bars per run (the current one outlined and marked), the
// median wall time of the baseline as a dashed line, and the table "this attempt vs the median of
// N earlier successful runs", phase by phase. Every figure comes from `history`; the page only
// draws it.

import { h, s, clear } from './dom.js';
import { phaseSwatch } from './breakdown_bar.js';
import { PHASES, phaseLabel } from './phases.js';
import { formatDelta, formatDuration, formatShortUtc } from './format.js';
import { niceTicks } from './gantt_layout.js';
import { PATTERNED_PHASES } from './patterns.js';
import { safeHref } from './url_state.js';

const CHART_HEIGHT = 150;
const PAD = { top: 16, right: 8, bottom: 22, left: 52 };

function drawChart(svg, history, width) {
  clear(svg);
  const runs = history.runs;
  const median = history.baseline?.median_wall_ms ?? null;
  const maxWall = Math.max(1, ...runs.map((r) => r.wall_ms), median ?? 0);
  const { ticks } = niceTicks(0, maxWall, 3);
  const top = Math.max(maxWall, ticks[ticks.length - 1] ?? 0);
  const plotW = Math.max(width - PAD.left - PAD.right, 40);
  const plotH = CHART_HEIGHT - PAD.top - PAD.bottom;
  const y = (ms) => PAD.top + plotH - (ms / top) * plotH;
  svg.setAttribute('viewBox', `0 0 ${width} ${CHART_HEIGHT}`);
  svg.setAttribute('width', width);
  svg.setAttribute('height', CHART_HEIGHT);

  for (const tick of ticks) {
    svg.append(s('line', { class: 'grid', x1: PAD.left, x2: PAD.left + plotW, y1: y(tick), y2: y(tick) }),
      s('text', { class: 'axis-text', x: PAD.left - 6, y: y(tick) + 4, 'text-anchor': 'end' }, tick === 0 ? '0' : formatDuration(tick)));
  }
  const band = plotW / Math.max(runs.length, 1);
  const labels = [];
  const barW = Math.max(Math.min(band * 0.7, 28), 3);
  runs.forEach((run, i) => {
    const x = PAD.left + i * band + (band - barW) / 2;
    const group = s('g', { class: run.current ? 'run current' : 'run' });
    let acc = 0;
    for (const { phase } of PHASES) {
      const ms = run.phases?.[phase] ?? 0;
      if (!(ms > 0)) continue;
      const y0 = y(acc + ms);
      const hgt = y(acc) - y0;
      group.append(s('rect', { class: `fill-${phase}`, x, y: y0, width: barW, height: hgt }));
      if (PATTERNED_PHASES.includes(phase)) group.append(s('rect', { fill: `url(#pat-${phase})`, x, y: y0, width: barW, height: hgt }));
      acc += ms;
    }
    group.append(s('rect', { class: 'run-outline', x: x - 1.5, y: y(run.wall_ms) - 1.5, width: barW + 3, height: y(0) - y(run.wall_ms) + 1.5 }));
    if (run.state === 'failed') group.append(s('text', { class: 'failed-mark', x: x + barW / 2, y: y(run.wall_ms) - 3, 'text-anchor': 'middle' }, '\u2715'));
    // Labels under the bars stay outside the links, whose names say everything already.
    const currentAt = runs.findIndex((r) => r.current);
    const nearCurrent = currentAt >= 0 && Math.abs(i - currentAt) * band < 34;
    if (run.current) {
      labels.push(s('text', { class: 'current-label', x: x + barW / 2, y: PAD.top + plotH + 14, 'text-anchor': 'middle' }, 'this'));
    } else if (!nearCurrent && (i === 0 || i % Math.ceil(runs.length / 6) === 0)) {
      labels.push(s('text', { class: 'axis-text', x: x + barW / 2, y: PAD.top + plotH + 14, 'text-anchor': 'middle' }, formatShortUtc(run.start_ms).slice(0, 5)));
    }
    const label = `${run.run_id}, try ${run.try_number}, ${run.state}, ${formatDuration(run.wall_ms)}${run.current ? ' (this attempt)' : ''}`;
    const href = safeHref(run.href);
    const node = href ? s('a', { href, 'aria-label': label }, group) : group;
    node.prepend(s('title', null, label));
    svg.append(node);
  });
  svg.append(...labels);
  if (median !== null) {
    svg.append(s('line', { class: 'median', x1: PAD.left, x2: PAD.left + plotW, y1: y(median), y2: y(median) }),
      s('text', { class: 'median-label', x: PAD.left + 4, y: y(median) - 4 }, `median ${formatDuration(median)}`));
  }
}

function deltaCell(ms) {
  if (!Number.isFinite(ms)) return h('td', { class: 'num' }, '\u2014');
  const word = ms > 0 ? 'slower' : ms < 0 ? 'faster' : 'same';
  const arrow = ms > 0 ? '\u25b2 ' : ms < 0 ? '\u25bc ' : '';
  return h('td', { class: ['num', ms > 0 ? 'delta-up' : ms < 0 ? 'delta-down' : null] },
    h('span', { 'aria-hidden': 'true' }, arrow), formatDelta(ms), h('span', { class: 'sr-only' }, ` ${word}`));
}

function renderComparison(history, attempt) {
  const { baseline, comparison } = history;
  if (!baseline) return null;
  const largest = comparison.reduce((best, c) => (Math.abs(c.delta_ms) > Math.abs(best?.delta_ms ?? 0) ? c : best), null);
  const wallDelta = attempt.wall_ms - baseline.median_wall_ms;
  return h('table', { id: 'comparison', class: 'data-table comparison' },
    h('caption', { class: 'sr-only' }, `This attempt against the median of ${baseline.runs} earlier successful runs, by phase`),
    h('thead', null, h('tr', null,
      h('th', { scope: 'col' }, 'Phase'), h('th', { scope: 'col', class: 'num' }, 'This attempt'),
      h('th', { scope: 'col', class: 'num' }, `Median of ${baseline.runs}`), h('th', { scope: 'col', class: 'num' }, 'Change'))),
    h('tbody', null, comparison.map((c) => h('tr', { class: c === largest && c.delta_ms !== 0 ? 'largest' : null, dataset: { phase: c.phase } },
      h('th', { scope: 'row' }, h('span', { class: 'phase-cell' }, phaseSwatch(c.phase), phaseLabel(c.phase))),
      h('td', { class: 'num' }, formatDuration(c.current_ms)),
      h('td', { class: 'num' }, formatDuration(c.median_ms)),
      deltaCell(c.delta_ms)))),
    h('tfoot', null, h('tr', null,
      h('th', { scope: 'row' }, 'Wall time'),
      h('td', { class: 'num' }, formatDuration(attempt.wall_ms)),
      h('td', { class: 'num' }, formatDuration(baseline.median_wall_ms)),
      deltaCell(wallDelta))));
}

// One sentence that answers "is this run unusual, and where": the wall time against the median,
// and the phase that changed most.
function historySummary(history, attempt) {
  const baseline = history?.baseline;
  if (!baseline) return null;
  const largest = history.comparison.reduce((best, c) => (Math.abs(c.delta_ms) > Math.abs(best?.delta_ms ?? 0) ? c : best), null);
  const wallDelta = attempt.wall_ms - baseline.median_wall_ms;
  const direction = wallDelta >= 0 ? 'longer' : 'shorter';
  const parts = [`${formatDuration(Math.abs(wallDelta))} ${direction} than the median of ${baseline.runs} earlier successful run${baseline.runs === 1 ? '' : 's'} (${formatDuration(baseline.median_wall_ms)})`];
  if (largest && largest.delta_ms !== 0) parts.push(`the largest change is ${phaseLabel(largest.phase)} ${formatDelta(largest.delta_ms)}`);
  return parts.join('; ');
}

export function renderHistory(history, attempt) {
  const card = h('section', { id: 'history', class: 'card history-card', 'aria-labelledby': 'history-title' });
  const runs = history?.runs ?? [];
  const summary = historySummary(history, attempt);
  card.append(h('div', { class: 'card-head' },
    h('h2', { id: 'history-title' }, 'Compared with earlier runs'),
    h('span', { class: 'muted' }, runs.length ? `${runs.length} latest attempt${runs.length === 1 ? '' : 's'} of this task` : '')));
  if (!history?.baseline) {
    card.append(h('p', { class: 'history-summary' }, attempt.kind === 'airflow'
      ? 'No baseline: there is no earlier successful run of this task to compare with.'
      : 'No baseline: a trace without Airflow identity has no earlier runs to compare with.'));
  } else if (attempt.in_progress) {
    card.append(h('p', { class: 'history-summary' },
      `Running for ${formatDuration(attempt.wall_ms)} so far; earlier successful runs took ${formatDuration(history.baseline.median_wall_ms)} (median of ${history.baseline.runs}).`));
  } else {
    card.append(h('p', { class: 'history-summary' }, `This attempt took ${formatDuration(attempt.wall_ms)}, ${summary}.`));
  }
  let observer = null;
  let svg = null;
  if (runs.length) {
    svg = s('svg', {
      class: 'history-chart', role: 'group',
      'aria-label': `Wall time of the ${runs.length} latest attempts, split by phase${history.baseline ? `, with the median of ${history.baseline.runs} earlier successful runs as a dashed line` : ''}`,
    });
    card.append(svg);
    observer = new ResizeObserver((entries) => {
      const width = Math.floor(entries[0].contentRect.width);
      if (width > 0 && Number(svg.getAttribute('width')) !== width) drawChart(svg, history, width);
    });
    observer.observe(card);
  }
  const table = renderComparison(history ?? {}, attempt);
  if (table) card.append(table);
  const layout = () => {
    const style = getComputedStyle(card);
    const width = Math.floor(card.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight));
    if (svg && width > 0) drawChart(svg, history, width);
  };
  return { element: card, summary, layout, disconnect: () => observer?.disconnect() };
}
