// Draws the Gantt rows on screen: the tree cells (HTML, role treeitem) and the bars (SVG) for
// rows [first, last) of the visible list. Only these rows exist in the DOM (virtualised), so the
// cost of a redraw is the same for 50 spans as for 20,000.

import { h, s, clear, srOnly } from './dom.js';
import { barExtent } from './gantt_layout.js';
import { formatDuration } from './format.js';
import { LANES, laneOf, phaseOfSpan } from './lanes.js';
import { hasChildren } from './gantt_tree.js';
import { PATTERNED_PHASES } from './patterns.js';
import { progressSummary } from './progress.js';

export const ROW_HEIGHT = 22;
const BAR_Y = 4;
const BAR_H = 14;

export function rowElementId(index) {
  return `gantt-row-${index}`;
}

function durationOf(span) {
  return span.end_ms - span.start_ms;
}

// What a screen reader hears beyond the visible label and duration (the row's name comes from its
// content, so that it contains the visible text).
function spokenExtras(span, state, info) {
  const parts = [LANES[laneOf(span)].name];
  if (span.open) parts.push('still running');
  const progress = span.open ? progressSummary(span.progress) : null;
  if (progress) parts.push(`${progress.percent} of tasks done`);
  if (span.status === 'error') parts.push('error');
  if (state.showCritical && span.critical) parts.push('on the critical path');
  if (info.findingCount) parts.push(`${info.findingCount} finding${info.findingCount === 1 ? '' : 's'}, ${info.severity}`);
  if (info.hiddenMatch) parts.push('contains search matches');
  return `, ${parts.join(', ')}, `;
}

// A running operation's task progress (Spark 4), as a small bar before its duration. <progress>
// rather than a styled box: the page's CSP allows no inline style.
function rowProgress(span) {
  const progress = span.open ? progressSummary(span.progress) : null;
  if (!progress) return null;
  return h('progress', { class: 'row-progress', max: '1', value: String(progress.fraction), title: progress.text, 'aria-hidden': 'true' });
}

function treeRow(state, index, position) {
  const span = state.spans[index];
  const tree = state.tree;
  const expandable = hasChildren(tree, index);
  const collapsed = expandable && state.collapsed.has(span.id);
  const info = {
    findingCount: state.findingCount.get(index) ?? 0,
    severity: state.findingSeverity.get(index),
    hiddenMatch: collapsed && state.hiddenMatchParents.has(index),
  };
  const classes = ['tree-row'];
  if (index === state.selected) classes.push('selected');
  if (state.matchSet.has(index)) classes.push('match');
  if (state.highlighted.has(index)) classes.push('highlight');
  const lane = laneOf(span);
  const row = h('div', {
    id: rowElementId(index), class: classes, role: 'treeitem',
    'aria-level': span.depth + 1, 'aria-selected': index === state.selected ? 'true' : 'false',
    'aria-expanded': expandable ? String(!collapsed) : null,
    dataset: { rowId: span.id, index, position },
  },
  h('span', { class: 'twisty', 'aria-hidden': 'true', dataset: { toggle: expandable ? '1' : null } }, expandable ? (collapsed ? '\u25b6' : '\u25bc') : ''),
  h('span', { class: ['lane-badge', `lane-${lane}`], 'aria-hidden': 'true' }, LANES[lane].badge),
  h('span', { class: ['row-label', span.status === 'error' ? 'error' : null], title: `${span.label}\n${span.name}` }, span.label || span.name),
  srOnly(spokenExtras(span, state, info)),
  h('span', { class: 'row-marks', 'aria-hidden': 'true' },
    state.showCritical && span.critical ? h('span', { class: 'mark-crit', title: 'on the critical path' }, '\u25c6') : null,
    info.findingCount ? h('span', { class: ['mark-finding', `severity-${info.severity}`], title: `${info.findingCount} finding(s)` }, '!') : null,
    info.hiddenMatch ? h('span', { class: 'mark-hidden-match', title: 'search matches inside' }, '\u2026') : null),
  rowProgress(span),
  h('span', { class: 'row-dur' }, span.open ? `${formatDuration(durationOf(span))}+` : formatDuration(durationOf(span))));
  row.style.paddingLeft = `${4 + span.depth * 14}px`;
  return row;
}

function barClasses(state, index, span) {
  const classes = ['bar', `lane-${laneOf(span)}`];
  const phase = phaseOfSpan(span);
  if (phase) classes.push(`fill-${phase}`);
  if (state.showCritical && span.critical) classes.push('critical');
  if (span.open) classes.push('open');
  if (index === state.selected) classes.push('selected');
  if (span.status === 'error') classes.push('error');
  if (state.highlighted.has(index)) classes.push('highlight');
  if (state.matchSet.has(index)) classes.push('match');
  return classes;
}

function rowBackground(state, index, position, y, width) {
  const classes = ['row-bg'];
  if (position % 2) classes.push('alt');
  if (index === state.selected) classes.push('selected');
  else if (state.matchSet.has(index) || state.highlighted.has(index)) classes.push('match');
  return s('rect', { class: classes, x: 0, y, width, height: ROW_HEIGHT, dataset: { index } });
}

function barRow(state, index, y, scale) {
  const span = state.spans[index];
  const g = s('g', { class: 'bar-row', dataset: { index } });
  const start = span.start_ms - state.startEpoch;
  const end = span.end_ms - state.startEpoch;
  const extent = barExtent(start, end, scale, 1.5);
  if (!extent) {
    // Outside the window: say which way it is.
    const left = end < scale.from;
    g.append(s('text', { class: 'clip-mark', x: left ? 3 : scale.width - 3, y: y + 15, 'text-anchor': left ? 'start' : 'end' }, left ? '\u25c2' : '\u25b8'));
    return g;
  }
  const barY = y + BAR_Y;
  g.append(s('rect', {
    class: barClasses(state, index, span), x: extent.x, y: barY, width: extent.width, height: BAR_H, rx: 2,
    dataset: { spanId: span.id },
  }));
  const phase = phaseOfSpan(span);
  if (phase && PATTERNED_PHASES.includes(phase)) {
    g.append(s('rect', { fill: `url(#pat-${phase})`, x: extent.x, y: barY, width: extent.width, height: BAR_H, 'pointer-events': 'none' }));
  }
  if (state.showCritical) {
    for (const segment of state.criticalSegments.get(index) ?? []) {
      const seg = barExtent(segment.start, segment.end, scale, 1);
      if (seg) g.append(s('rect', { class: 'crit-seg', x: seg.x, y: barY + BAR_H + 1, width: seg.width, height: 2.5 }));
    }
  }
  if (span.open && !extent.clippedRight) {
    // A running span's end is only "latest seen": an arrow at its end, inside the bar when the bar
    // reaches the chart's edge.
    const end = extent.x + extent.width;
    const width = scale.width;
    const inside = end + 7 > width;
    const x = inside ? end - 7 : end + 1;
    g.append(s('path', { class: ['open-tip', inside ? 'inside' : null], d: `M${x},${barY + 2} l5,${BAR_H / 2 - 2} l-5,${BAR_H / 2 - 2}z` }));
  }
  const severity = state.findingSeverity.get(index);
  if (severity) {
    const cx = Math.max(extent.x, 5);
    g.append(s('path', {
      class: ['finding-marker', `severity-${severity}`],
      d: `M${cx},${barY - 3} l5,5 l-5,5 l-5,-5z`,
    }));
  }
  // Duration next to the bar where there is room, else inside it.
  const text = span.open ? `${formatDuration(end - start)}+` : formatDuration(end - start);
  const textW = text.length * 6 + 6;
  const right = extent.x + extent.width + (span.open ? 10 : 4);
  if (right + textW < scale.width) {
    g.append(s('text', { class: 'bar-text', x: right, y: barY + 11 }, text));
  } else if (extent.x - textW > 0) {
    g.append(s('text', { class: 'bar-text', x: extent.x - 4, y: barY + 11, 'text-anchor': 'end' }, text));
  }
  return g;
}

// Redraws rows [first, last) of state.rows into the tree container and the bars SVG.
export function drawRows(state, treeEl, barsEl, first, last, scale, ticks) {
  clear(treeEl);
  clear(barsEl);
  const height = Math.max((last - first) * ROW_HEIGHT, 0);
  const width = scale.width;
  barsEl.setAttribute('width', width);
  barsEl.setAttribute('height', height);
  barsEl.setAttribute('viewBox', `0 0 ${width} ${height}`);
  // Three layers: row backgrounds, then the time grid, then the bars over both.
  const rows = document.createDocumentFragment();
  const backgrounds = s('g', { class: 'backgrounds' });
  const grid = s('g', { class: 'grid' });
  const bars = s('g', { class: 'bar-rows' });
  for (let position = first; position < last; position += 1) {
    const index = state.rows[position];
    const y = (position - first) * ROW_HEIGHT;
    rows.append(treeRow(state, index, position));
    backgrounds.append(rowBackground(state, index, position, y, width));
    bars.append(barRow(state, index, y, scale));
  }
  for (const t of ticks) {
    const x = scale.x(t);
    grid.append(s('line', { class: 'grid-line', x1: x, x2: x, y1: 0, y2: height }));
  }
  barsEl.append(backgrounds, grid, bars);
  treeEl.append(rows);
}
