// "Where the time went": one bar of the six breakdown phases, widths proportional to their ms
// (breakdown_geometry.js), labelled where a label fits, with a legend of all six (duration and
// share). With Airflow's task (`airflow_task`, see airflow_task.js) the `client` phase is the time
// outside Spark, and its three parts (before the first Spark call, between calls, after the last)
// go in the bar's tooltip and description and below the legend. Also the small stacked bar of the
// task list and the phase swatch used in every legend.

import { h } from './dom.js';
import { phaseShares, segmentPixels, labelFits } from './breakdown_geometry.js';
import { formatDuration, formatPercent } from './format.js';
import { phaseList } from './phases.js';
import { formatTaskDuration, outsidePartsText } from './airflow_task.js';

export function phaseSwatch(phase) {
  return h('span', { class: ['swatch', `phase-${phase}`], 'aria-hidden': 'true' });
}

// "resource wait 41 min (60%), compute 24 min (35%), …"; `clientParts` follows the client phase.
function describe(phases, clientParts = '') {
  return phases.filter((p) => p.ms > 0)
    .map((p) => `${p.label} ${formatDuration(p.ms)} (${formatPercent(p.share)})${p.phase === 'client' ? clientParts : ''}`).join(', ');
}

// The labels a segment can hold, longest first.
function labelsFor(segment) {
  const share = formatPercent(segment.share);
  return [`${segment.label} ${formatDuration(segment.ms)} \u00b7 ${share}`, `${formatDuration(segment.ms)} \u00b7 ${share}`, share];
}

// The bar of an attempt's breakdown ({wall_ms, phases:[{phase,label,ms,fraction}]}): #breakdown,
// one child per phase with data-phase and data-ms. Labels follow the bar's width as it resizes.
// `task`: airflowTaskView(attempt) or null.
export function renderBreakdownBar(breakdown, task = null) {
  const shares = phaseShares(breakdown.phases);
  const parts = task ? `: ${outsidePartsText(task)}` : '';
  const description = describe(shares, parts);
  const bar = h('div', {
    id: 'breakdown', class: 'breakdown-bar', role: 'img',
    'aria-label': `Where the time went: ${description || 'no time recorded'}`,
  });
  const labels = [];
  for (const segment of shares) {
    const label = h('span', { class: 'segment-label' });
    const el = h('div', {
      class: ['segment', `phase-${segment.phase}`],
      dataset: { phase: segment.phase, ms: segment.ms },
      title: parts && segment.phase === 'client' ? `${segment.label} ${formatDuration(segment.ms)}${parts}` : null,
    }, label);
    el.style.width = `${segment.share * 100}%`;
    labels.push(label);
    bar.append(el);
  }
  const fitLabels = (width) => {
    const pixels = segmentPixels(shares, width);
    pixels.forEach((segment, i) => {
      const text = labelsFor(segment).find((t) => labelFits(segment.width, t.length, 6.6, 10)) ?? '';
      labels[i].textContent = text;
      labels[i].hidden = text === '';
    });
  };
  const observer = new ResizeObserver((entries) => fitLabels(entries[0].contentRect.width));
  observer.observe(bar);
  // layout(): label now, once the bar is in the document (the observer only fires before the next paint).
  return { element: bar, layout: () => fitLabels(bar.clientWidth), disconnect: () => observer.disconnect() };
}

export function renderBreakdownLegend(breakdown) {
  const shares = phaseShares(breakdown.phases);
  return h('ul', { class: 'phase-legend', 'aria-label': 'Phases' },
    shares.map((p, i) => h('li', { class: p.ms > 0 ? null : 'zero', dataset: { phase: p.phase } },
      phaseSwatch(p.phase),
      h('span', { class: 'legend-label' }, p.label),
      h('span', { class: 'legend-ms' }, formatDuration(p.ms)),
      h('span', { class: 'legend-share' }, formatPercent(breakdown.phases[i].fraction ?? p.share)))));
}

// Below the legend, with Airflow's task: "Outside Spark 3m 11s of the Airflow task's 2h 15m 00s:
// 2.0 s before the first Spark call, 2m 09s between Spark calls, 1m 00s after the last Spark
// call." (#outside-spark, each figure with data-part and data-ms). `task`: airflowTaskView(attempt).
export function renderOutsideSpark(task) {
  const figure = (key, ms, text) => h('span', { class: 'outside-part', dataset: { part: key, ms } }, text);
  const parts = [];
  for (const p of task.parts) {
    if (parts.length) parts.push(', ');
    parts.push(figure(p.key, p.ms, [h('strong', null, formatTaskDuration(p.ms)), ` ${p.label}`]));
  }
  return h('p', { id: 'outside-spark', class: 'outside-spark', dataset: { ms: task.outsideMs } },
    phaseSwatch('client'),
    h('span', null, 'Outside Spark ', h('strong', null, formatTaskDuration(task.outsideMs)),
      ` of the Airflow task\u2019s ${formatTaskDuration(task.wallMs)}${task.running ? ' so far' : ''}: `, parts, '.'));
}

// The small bar of a task-list row, from its bare `phases` object.
export function renderMiniBar(phases, wallMs) {
  const shares = phaseShares(phaseList(phases));
  const bar = h('div', { class: 'mini-bar', role: 'img', 'aria-label': describe(shares) || 'no time recorded' });
  for (const segment of shares) {
    if (segment.share === 0) continue;
    const el = h('span', { class: ['segment', `phase-${segment.phase}`], dataset: { phase: segment.phase } });
    el.style.width = `${segment.share * 100}%`;
    bar.append(el);
  }
  if (!wallMs) bar.classList.add('empty');
  return bar;
}

// A compact legend of the six phases (swatch and name), for the task list and the history chart.
export function renderPhaseKey(label = 'Phase colours') {
  return h('ul', { class: 'phase-key', 'aria-label': label },
    phaseList({}).map((p) => h('li', null, phaseSwatch(p.phase), p.label)));
}
