// The attempt page's header: identity, state, wall time, the tries of this run as tabs, the
// previous / next run, and the downloads (Chrome trace JSON for Perfetto, OTLP JSON). When the API
// has Airflow's own task attempt (`airflow_task`), Airflow's state, operator and host beside Spark's
// state, and Airflow's wall time against Spark's part of it; without one, nothing of that.

import { h, link, srOnly } from './dom.js';
import { airflowStateBadge, stateBadge } from './badges.js';
import { airflowTaskView, taskTimes } from './airflow_task.js';
import { formatDuration, formatTimeUtc } from './format.js';
import { safeHref } from './url_state.js';

function item(term, value, mono = false) {
  return h('div', null, h('dt', null, term), h('dd', { class: mono ? 'mono' : null }, value));
}

export function attemptTitle(attempt) {
  if (attempt.kind === 'airflow' && attempt.identity) {
    const { dag_id, task_id, map_index } = attempt.identity;
    return map_index === -1 ? `${dag_id}.${task_id}` : `${dag_id}.${task_id}[${map_index}]`;
  }
  return attempt.name || attempt.trace_ids?.[0] || 'trace';
}

function renderTries(attempt) {
  if (!attempt.tries?.length) return null;
  const current = attempt.identity?.try_number;
  return h('nav', { class: 'tries', 'aria-label': 'Tries of this run' },
    h('span', { class: 'tries-label' }, 'Tries'),
    attempt.tries.map((t) => {
      const content = [`Try ${t.try_number}`, stateBadge(t.state), Number.isFinite(t.wall_ms) ? h('span', { class: 'muted' }, formatDuration(t.wall_ms)) : null];
      return t.try_number === current
        ? h('a', { class: 'try-tab', href: safeHref(t.href) ?? undefined, 'aria-current': 'page' }, content)
        : link(t.href, { class: 'try-tab' }, content);
    }));
}

function renderRuns(attempt) {
  if (attempt.kind !== 'airflow') return null;
  const prev = attempt.previous_run;
  const next = attempt.next_run;
  return h('nav', { class: 'runs', 'aria-label': 'Other runs of this task' },
    prev ? link(prev.href, { title: prev.run_id }, '\u2190 Previous run') : h('span', { class: 'muted' }, 'No earlier run'),
    next ? link(next.href, { title: next.run_id }, 'Next run \u2192') : h('span', { class: 'muted' }, 'No later run'));
}

function renderDownloads(attempt) {
  const d = attempt.downloads;
  if (!d) return null;
  return h('div', { class: 'downloads' },
    h('span', null, 'Download'),
    safeHref(d.chrome_trace) ? h('a', { id: 'download-chrome', href: d.chrome_trace, download: '' }, 'Chrome trace JSON') : null,
    h('span', { class: 'muted' }, '(opens in Perfetto)'),
    safeHref(d.otlp_json) ? h('a', { id: 'download-otlp', href: d.otlp_json, download: '' }, 'OTLP JSON') : null);
}

// "Airflow ✓ success" / "Spark ✓ success": whose state a badge is, in words.
function sourcedState(id, source, badge) {
  return h('span', { id, class: 'state-source' }, h('span', { class: 'state-source-name' }, source), badge);
}

// "Airflow task 20m 03s · Spark 5m 01s · outside Spark 15m 02s": each figure with its ms.
function renderTaskTimes(task) {
  const parts = [];
  for (const t of taskTimes(task)) {
    if (parts.length) parts.push(h('span', { class: 'sep', 'aria-hidden': 'true' }, ' \u00b7 '), srOnly(', '));
    parts.push(h('span', { class: 'task-time', dataset: { part: t.key, ms: t.ms } }, `${t.label} `, h('strong', null, t.text)));
  }
  return h('p', { id: 'task-times', class: 'task-times' }, parts, task.running ? h('span', { class: 'muted' }, ' so far') : null);
}

export function renderAttemptHeader(attempt) {
  const identity = attempt.identity;
  const task = airflowTaskView(attempt);
  const live = attempt.in_progress
    ? h('span', { class: 'live' }, h('span', { 'aria-hidden': 'true' }, '\u25cf '), 'live \u00b7 updating every 2 s')
    : null;
  const details = attempt.kind === 'airflow' && identity
    ? [item('DAG', identity.dag_id), item('Task', identity.task_id), item('Run', identity.run_id, true),
      item('Try', String(identity.try_number)), identity.map_index !== -1 ? item('Map index', String(identity.map_index)) : null]
    : [item('Trace', attempt.trace_ids?.[0] ?? '', true)];
  const states = task
    ? [sourcedState('airflow-state', 'Airflow', airflowStateBadge(task.state.state)), sourcedState('spark-state', 'Spark', stateBadge(attempt.state))]
    : [stateBadge(attempt.state)];
  return h('section', { class: 'attempt-head', 'aria-labelledby': 'attempt-title' },
    h('div', { class: 'title-row' },
      h('h1', { id: 'attempt-title' }, attemptTitle(attempt)),
      states,
      h('span', { class: 'wall', title: task ? 'wall time of the Airflow task' : 'wall time' }, formatDuration(attempt.wall_ms)),
      live),
    task ? renderTaskTimes(task) : null,
    h('dl', { class: 'identity' },
      details,
      task?.operator ? item('Operator', task.operator, true) : null,
      task?.hostname ? item('Host', task.hostname, true) : null,
      item('Started', formatTimeUtc(attempt.start_ms)),
      item(attempt.in_progress ? 'Last seen' : 'Ended', formatTimeUtc(attempt.end_ms)),
      attempt.kind === 'airflow' && attempt.trace_ids?.length ? item('Trace', attempt.trace_ids.join(', '), true) : null),
    h('div', { class: 'head-nav' }, renderTries(attempt), renderRuns(attempt), renderJumps(attempt), renderDownloads(attempt)));
}

// In-page links to the sections, the timeline being well below the fold.
function renderJumps(attempt) {
  const jump = (id, text) => {
    const a = h('a', null, text);
    a.setAttribute('href', `#${id}`);  // a fragment: not a URL that safeHref passes
    return a;
  };
  const n = attempt.findings?.length ?? 0;
  return h('nav', { class: 'jumps', 'aria-label': 'Sections of this page' },
    jump('findings-title', `Findings (${n})`), jump('history-title', 'History'), jump('timeline-title', 'Timeline'));
}
