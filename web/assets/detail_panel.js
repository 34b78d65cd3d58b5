// The detail panel (#detail) of the selected span: name, lane, times and duration, a Spark 4
// operation's progress, status, its findings, stage task statistics, attributes grouped
// (attribute_groups.js), events and links.

import { h, clear, link, append } from './dom.js';
import { groupAttributes, taskDurationQuantiles } from './attribute_groups.js';
import { severityBadge } from './badges.js';
import { formatClockUtc, formatDuration, formatOffset, formatTimeUtc } from './format.js';
import { LANES, laneOf } from './lanes.js';
import { progressSummary } from './progress.js';
import { safeHref } from './url_state.js';

const OPEN_GROUPS = new Set(['Tasks', 'Executor time', 'Shuffle', 'Spill and memory', 'Input and output', 'Phase', 'Job']);

function kv(pairs) {
  return h('dl', { class: 'kv' }, pairs.filter(Boolean).map(([term, value, field]) =>
    [h('dt', null, term), h('dd', { dataset: { field } }, value)]));
}

// Spark 4's execution_progress of an operation: the latest figures (so far, while it runs).
function progressRow(span) {
  const progress = progressSummary(span.progress);
  if (!progress) return null;
  return [span.open ? 'Progress' : 'Final progress', h('span', { class: 'detail-progress' },
    h('progress', { max: '1', value: String(progress.fraction), 'aria-label': `${progress.percent} of tasks done` }),
    ` ${progress.percent} \u00b7 ${progress.text}`), 'progress'];
}

function quantileChart(quantiles) {
  const max = Math.max(...quantiles.map((q) => q.ms), 1);
  return h('div', { class: 'quantiles', role: 'img', 'aria-label': `Task durations: ${quantiles.map((q) => `${q.label} ${formatDuration(q.ms)}`).join(', ')}` },
    quantiles.map((q) => {
      const bar = h('span', { class: 'q-bar' });
      bar.style.width = `${(q.ms / max) * 100}%`;
      return [h('span', { 'aria-hidden': 'true' }, q.label), h('span', { class: 'q-track', 'aria-hidden': 'true' }, bar), h('span', { class: 'q-value', 'aria-hidden': 'true' }, formatDuration(q.ms))];
    }));
}

function attributeTables(attributes) {
  return groupAttributes(attributes).map((group) => h('details', { open: OPEN_GROUPS.has(group.title) },
    h('summary', null, group.title, group.prefix ? h('span', { class: 'prefix' }, `${group.prefix}*`) : null),
    h('table', { class: 'attr-table' },
      h('tbody', null, group.rows.map((row) => h('tr', null,
        h('th', { scope: 'row', title: row.key }, row.label),
        h('td', null, row.text, row.raw ? h('span', { class: 'raw' }, row.raw) : null)))))));
}

function eventList(span, startEpoch) {
  // In time order: a span's events come in groups (an operation's milestones, then its progress
  // samples), not as one time line. The sort is stable: events at the same time keep their order.
  const events = (span.events ?? []).filter((e) => e.name !== 'sparktrace.finding').sort((a, b) => a.time_ms - b.time_ms);
  if (!events.length) return null;
  return [h('h3', null, `Events (${events.length})`), h('ul', { class: 'events-list' }, events.map((event) => {
    const attrs = Object.entries(event.attributes ?? {});
    return h('li', null,
      h('span', { class: 'ev-time', title: formatClockUtc(event.time_ms, true) }, formatOffset(event.time_ms - startEpoch)),
      h('span', { class: 'ev-name' }, event.name),
      attrs.length ? h('span', { class: 'ev-attrs' }, attrs.map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : v}`).join('  ')) : null);
  }))];
}

function findingList(span, attempt, onFinding) {
  const findings = (attempt.findings ?? []).filter((f) => f.span_ids?.includes(span.id) || span.finding_ids?.includes(f.id));
  if (!findings.length) return null;
  return [h('h3', null, `Findings (${findings.length})`), h('ul', { class: 'detail-findings' }, findings.map((f) => h('li', null,
    severityBadge(f.severity),
    h('button', { type: 'button', class: 'button small', 'aria-label': `Show the spans of: ${f.title}`, onclick: () => onFinding?.(f) }, 'show'),
    h('span', null, f.title))))];
}

export class DetailPanel {
  constructor({ onZoom, onFinding }) {
    this.onZoom = onZoom;
    this.onFinding = onFinding;
    this.element = h('section', { id: 'detail', class: 'detail', role: 'region', 'aria-label': 'Span details', tabindex: '0' });
    this.show(null, null);
  }

  show(span, attempt) {
    const el = this.element;
    clear(el);
    if (!span) {
      append(el, h('h2', null, 'Span details'),
        h('p', { class: 'detail-empty' }, 'Select a span in the timeline (click it, or use the arrow keys) to see its times, status, attributes and events.'));
      return;
    }
    const start = span.start_ms - attempt.start_ms;
    const duration = span.end_ms - span.start_ms;
    const statusText = span.status === 'error' ? `error${span.status_message ? `: ${span.status_message}` : ''}` : span.status;
    const sparkUi = safeHref(span.links?.spark_ui ?? '') ? span.links.spark_ui : null;
    const quantiles = taskDurationQuantiles(span.attributes);
    append(el,
      h('h2', null, span.label || span.name),
      h('p', { class: 'detail-name' }, span.name),
      h('div', { class: 'detail-actions' },
        h('button', { type: 'button', class: 'button small', onclick: () => this.onZoom?.(span) }, 'Zoom to span'),
        sparkUi ? link(sparkUi, { class: 'button small', rel: 'noopener noreferrer', target: '_blank' }, 'Open in Spark UI \u2197') : null),
      kv([
        ['Lane', LANES[laneOf(span)].name],
        ['Duration', span.open ? `${formatDuration(duration)} so far (still running)` : formatDuration(duration)],
        ['Start', `${formatOffset(start)} \u00b7 ${formatClockUtc(span.start_ms, true)} UTC`],
        ['End', span.open ? `open (last seen ${formatClockUtc(span.end_ms)} UTC)` : `${formatOffset(span.end_ms - attempt.start_ms)} \u00b7 ${formatClockUtc(span.end_ms, true)} UTC`],
        progressRow(span),
        ['Status', h('span', { class: span.status === 'error' ? 'state-failed' : null }, statusText)],
        ['Critical path', span.critical ? 'yes' : 'no'],
        ['Span id', h('code', null, span.id), 'id'],
        span.parent_id ? ['Parent', h('code', null, span.parent_id)] : null,
        ['Trace', h('code', null, span.trace_id)],
      ]),
      findingList(span, attempt, this.onFinding),
      quantiles.length ? [h('h3', null, 'Task durations'), quantileChart(quantiles)] : null,
      Object.keys(span.attributes ?? {}).length ? [h('h3', null, 'Attributes'), attributeTables(span.attributes)] : null,
      eventList(span, attempt.start_ms),
      h('p', { class: 'muted detail-foot' }, `Started ${formatTimeUtc(span.start_ms)}`));
  }

  focus() {
    this.element.scrollIntoView({ block: 'nearest' });
    this.element.focus({ preventScroll: true });
  }
}
