// Airflow's own task attempt (the attempt JSON's `airflow_task`, docs/trace-view-api.md) as the page
// shows it: Airflow's state next to Spark's, Airflow's wall time against Spark's and the time outside
// Spark, and that time in its three parts. Pure, no DOM: attempt_header.js, breakdown_bar.js and
// attempt_page.js lay these out.

import { formatDuration } from './format.js';

// Airflow's task states (lower-case, as Airflow reports them): an icon and a tone for each, the
// state's words always beside them, so that colour is never the only cue. A state not listed here
// still shows its own words, with a question mark and the muted tone.
const STATES = {
  success: { icon: '\u2713', tone: 'ok' },
  failed: { icon: '\u2715', tone: 'bad' },
  upstream_failed: { icon: '\u2715', tone: 'bad' },
  running: { icon: '\u25b6', tone: 'run' },
  up_for_retry: { icon: '\u21bb', tone: 'warn' },
  up_for_reschedule: { icon: '\u21bb', tone: 'warn' },
  restarting: { icon: '\u21bb', tone: 'warn' },
  deferred: { icon: '\u23f8', tone: 'warn' },
  queued: { icon: '\u25cb', tone: 'muted' },
  scheduled: { icon: '\u25cb', tone: 'muted' },
  skipped: { icon: '\u2298', tone: 'muted' },
  removed: { icon: '\u2298', tone: 'muted' },
  shutdown: { icon: '\u2298', tone: 'bad' },
};

const isNumber = (v) => typeof v === 'number' && Number.isFinite(v);

// {state, text, icon, tone} of an Airflow state: "up_for_retry" reads "up for retry".
export function airflowState(state) {
  const raw = typeof state === 'string' && state !== '' ? state : 'unknown';
  const known = Object.hasOwn(STATES, raw) ? STATES[raw] : { icon: '?', tone: 'muted' };
  return { state: raw, text: raw.replace(/_/g, ' '), ...known };
}

// The three parts of the time outside Spark, in time order, with the API's keys.
export const OUTSIDE_PARTS = [
  { key: 'before_first_call', label: 'before the first Spark call' },
  { key: 'between_calls', label: 'between Spark calls' },
  { key: 'after_last_call', label: 'after the last Spark call' },
];

// The page's view of `attempt.airflow_task`, or null when there is none (an older trace, a task
// without the Airflow plugin, a trace without Airflow identity) or it lacks the figures:
// {spanId, state (airflowState), operator, hostname, running, startMs, endMs, wallMs, sparkMs,
//  outsideMs, parts: [{key, label, ms}]}.
export function airflowTaskView(attempt) {
  const task = attempt?.airflow_task;
  if (!task || typeof task !== 'object') return null;
  const outside = task.outside_spark ?? {};
  if (!isNumber(task.wall_ms) || !isNumber(outside.ms)) return null;
  const sparkMs = isNumber(task.spark_ms) ? task.spark_ms : task.wall_ms - outside.ms;
  return {
    spanId: typeof task.span_id === 'string' ? task.span_id : '',
    state: airflowState(task.state),
    operator: typeof task.operator === 'string' ? task.operator : '',
    hostname: typeof task.hostname === 'string' ? task.hostname : '',
    running: task.running === true,
    startMs: isNumber(task.start_ms) ? task.start_ms : null,
    endMs: isNumber(task.end_ms) ? task.end_ms : null,
    wallMs: task.wall_ms,
    sparkMs,
    outsideMs: outside.ms,
    parts: OUTSIDE_PARTS.map(({ key, label }) => ({
      key, label, ms: isNumber(outside[`${key}_ms`]) ? outside[`${key}_ms`] : 0,
    })),
  };
}

function pad2(n) {
  return String(n).padStart(2, '0');
}

// A duration precise to the second, for figures read side by side: "950 ms", "4.2 s", "42 s",
// "20m 03s", "2h 05m 09s", "3d 04h 10m". Under a minute it is formatDuration's.
export function formatTaskDuration(ms) {
  if (!isNumber(ms) || Math.abs(ms) < 59500) return formatDuration(ms);
  if (ms < 0) return `\u2212${formatTaskDuration(-ms)}`;
  const total = Math.round(ms / 1000);
  const s = total % 60;
  const m = Math.floor(total / 60) % 60;
  const h = Math.floor(total / 3600);
  if (h === 0) return `${m}m ${pad2(s)}s`;
  if (h < 48) return `${h}h ${pad2(m)}m ${pad2(s)}s`;
  const minutes = Math.round(ms / 60000);  // two days and more: to the minute
  return `${Math.floor(minutes / 1440)}d ${pad2(Math.floor(minutes / 60) % 24)}h ${pad2(minutes % 60)}m`;
}

// The header's three figures: Airflow's wall time, Spark's part of it and the rest.
// [{key, label, ms, text}] — keys airflow_task, spark, outside_spark.
export function taskTimes(view) {
  return [
    { key: 'airflow_task', label: 'Airflow task', ms: view.wallMs },
    { key: 'spark', label: 'Spark', ms: view.sparkMs },
    { key: 'outside_spark', label: 'outside Spark', ms: view.outsideMs },
  ].map((t) => ({ ...t, text: formatTaskDuration(t.ms) }));
}

// "2.0 s before the first Spark call, 2m 09s between Spark calls, 1m 00s after the last Spark call".
export function outsidePartsText(view) {
  return view.parts.map((p) => `${formatTaskDuration(p.ms)} ${p.label}`).join(', ');
}

// `spans` (tree order) with the Airflow task's span and its subtree first, so that it is the top
// row and the root of the tree. The API already sends it first; this only holds when another root
// starts at the same instant or earlier (clock skew between Airflow and Spark). Answers `spans`
// itself when there is nothing to move (no such span, not a root, or first already).
export function taskSpanFirst(spans, spanId) {
  if (!spanId || !Array.isArray(spans) || !spans.length || spans[0].id === spanId) return spans;
  const at = spans.findIndex((s) => s.id === spanId);
  if (at <= 0 || spans[at].depth !== 0) return spans;
  let end = at + 1;
  while (end < spans.length && spans[end].depth > 0) end += 1;
  return [...spans.slice(at, end), ...spans.slice(0, at), ...spans.slice(end)];
}
