// The executor-count lane under the time axis: a step chart of `executors.series` over the zoom
// window, so that resource wait (work ready, no executor) shows as a flat zero under waiting bars.
// One <path> per lane (the step), plus grid and labels.

import { s, clear } from './dom.js';
import { stepPath } from './gantt_layout.js';

const EXECUTOR_LANE_HEIGHT = 34;

export function createExecutorLane() {
  return s('svg', { id: 'executor-lane', class: 'executor-lane', role: 'img', height: EXECUTOR_LANE_HEIGHT });
}

// Redraws the lane for `scale` (ms since the attempt's start) and the attempt's executors.
export function drawExecutorLane(svg, executors, startEpochMs, totalMs, scale) {
  clear(svg);
  const width = scale.width;
  svg.setAttribute('width', width);
  svg.setAttribute('viewBox', `0 0 ${width} ${EXECUTOR_LANE_HEIGHT}`);
  const known = executors?.known && executors.series?.length > 0;
  const max = Math.max(executors?.max ?? 0, 1);
  svg.append(s('line', { class: 'lane-grid', x1: 0, x2: width, y1: 2, y2: 2 }));
  // Closed downwards so the area under the step is filled: an empty lane reads as "none alive".
  const step = known ? stepPath(executors.series, startEpochMs, totalMs, scale, EXECUTOR_LANE_HEIGHT, max) : '';
  const firstX = /^M([\d.]+)/.exec(step)?.[1] ?? '0';
  svg.append(s('path', { class: 'executor-step', d: step ? `${step}V${EXECUTOR_LANE_HEIGHT}H${firstX}Z` : 'M0,0' }));
  if (!known) svg.append(s('text', { class: 'lane-text', x: 4, y: 21 }, 'executor count unknown'));
  svg.setAttribute('aria-label', known
    ? `Executors alive over the visible time, from 0 to ${executors.max}`
    : 'Executor count unknown for this attempt');
}
