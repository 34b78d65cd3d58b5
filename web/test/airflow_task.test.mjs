import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  airflowState, airflowTaskView, formatTaskDuration, outsidePartsText, taskSpanFirst, taskTimes, OUTSIDE_PARTS,
} from '../assets/airflow_task.js';

const load = (name) => JSON.parse(readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8'));
const S = 1000;

// The brief's example: a 20 min 3 s task of which Spark did 5 min 1 s.
function attemptWith(task) {
  return { state: 'success', airflow_task: task };
}
const TASK = {
  span_id: '00f067aa0ba902b7', state: 'success', operator: 'SparkSubmitOperator', hostname: 'worker-1',
  start_ms: 1e12, end_ms: 1e12 + 1203 * S, wall_ms: 1203 * S, running: false,
  outside_spark: { before_first_call_ms: 95 * S, between_calls_ms: 787 * S, after_last_call_ms: 20 * S, ms: 902 * S },
  spark_ms: 301 * S,
};

test('Airflow states: words, an icon and a tone, for known and unknown states', () => {
  assert.deepEqual(airflowState('success'), { state: 'success', text: 'success', icon: '\u2713', tone: 'ok' });
  assert.equal(airflowState('failed').tone, 'bad');
  assert.equal(airflowState('upstream_failed').text, 'upstream failed');
  assert.equal(airflowState('upstream_failed').tone, 'bad');
  assert.deepEqual(airflowState('up_for_retry'), { state: 'up_for_retry', text: 'up for retry', icon: '\u21bb', tone: 'warn' });
  assert.equal(airflowState('up_for_reschedule').text, 'up for reschedule');
  assert.equal(airflowState('running').tone, 'run');
  assert.equal(airflowState('skipped').tone, 'muted');
  // A state this page does not know keeps its words; only the icon and the tone are generic.
  assert.deepEqual(airflowState('some_new_state'), { state: 'some_new_state', text: 'some new state', icon: '?', tone: 'muted' });
  for (const bad of [undefined, null, '', 42]) assert.equal(airflowState(bad).state, 'unknown');
  // Every icon has words beside it: no state is colour or icon alone.
  for (const state of ['success', 'failed', 'up_for_retry', 'skipped', 'queued', 'deferred']) {
    assert.ok(airflowState(state).text.length > 0 && airflowState(state).icon.length > 0, state);
  }
});

test('no airflow_task, nothing to show', () => {
  for (const attempt of [{}, { airflow_task: null }, { airflow_task: undefined }, null, undefined,
    { airflow_task: 'success' }, { airflow_task: { state: 'success' } }, { airflow_task: { wall_ms: 5, outside_spark: null } }]) {
    assert.equal(airflowTaskView(attempt), null, JSON.stringify(attempt));
  }
  for (const name of ['attempt_try1.json', 'attempt_running.json', 'trace.json']) assert.equal(airflowTaskView(load(name)), null, name);
});

test('the view of airflow_task: its state, operator, host and figures', () => {
  const view = airflowTaskView(attemptWith(TASK));
  assert.equal(view.spanId, TASK.span_id);
  assert.equal(view.state.text, 'success');
  assert.equal(view.operator, 'SparkSubmitOperator');
  assert.equal(view.hostname, 'worker-1');
  assert.equal(view.running, false);
  assert.equal(view.wallMs, 1203 * S);
  assert.equal(view.sparkMs, 301 * S);
  assert.equal(view.outsideMs, 902 * S);
  assert.deepEqual(view.parts.map((p) => p.key), ['before_first_call', 'between_calls', 'after_last_call']);
  assert.deepEqual(view.parts.map((p) => p.ms), [95 * S, 787 * S, 20 * S]);
  assert.equal(view.startMs, TASK.start_ms);
  assert.equal(view.endMs, TASK.end_ms);
});

test('unknown operator and host stay empty; a missing spark_ms is wall minus outside; missing parts are 0', () => {
  const view = airflowTaskView(attemptWith({
    ...TASK, operator: '', hostname: undefined, spark_ms: undefined, start_ms: 'x',
    outside_spark: { ms: 902 * S, between_calls_ms: 902 * S },
  }));
  assert.equal(view.operator, '');
  assert.equal(view.hostname, '');
  assert.equal(view.sparkMs, 301 * S);
  assert.equal(view.startMs, null);
  assert.deepEqual(view.parts.map((p) => p.ms), [0, 902 * S, 0]);
});

test('durations precise to the second, side by side', () => {
  assert.equal(formatTaskDuration(1203 * S), '20m 03s');
  assert.equal(formatTaskDuration(301 * S), '5m 01s');
  assert.equal(formatTaskDuration(902 * S), '15m 02s');
  assert.equal(formatTaskDuration(60 * S), '1m 00s');
  assert.equal(formatTaskDuration(59.6 * S), '1m 00s');
  assert.equal(formatTaskDuration(59.4 * S), '59 s');
  assert.equal(formatTaskDuration(4162.4), '4.2 s');
  assert.equal(formatTaskDuration(950), '950 ms');
  assert.equal(formatTaskDuration(0), '0 ms');
  assert.equal(formatTaskDuration(8100 * S), '2h 15m 00s');
  assert.equal(formatTaskDuration(3 * 3600 * S + 62 * S + 400), '3h 01m 02s');
  assert.equal(formatTaskDuration(76 * 3600 * S + 10 * 60 * S), '3d 04h 10m');
  assert.equal(formatTaskDuration(76 * 3600 * S + 10 * 60 * S + 40 * S), '3d 04h 11m');
  assert.equal(formatTaskDuration(48 * 3600 * S - 400), '2d 00h 00m');
  assert.equal(formatTaskDuration(-1203 * S), '\u221220m 03s');
  assert.equal(formatTaskDuration(NaN), '\u2014');
  assert.equal(formatTaskDuration(undefined), '\u2014');
});

test('the header\'s three figures: Airflow task, Spark, outside Spark', () => {
  const view = airflowTaskView(attemptWith(TASK));
  assert.deepEqual(taskTimes(view), [
    { key: 'airflow_task', label: 'Airflow task', ms: 1203 * S, text: '20m 03s' },
    { key: 'spark', label: 'Spark', ms: 301 * S, text: '5m 01s' },
    { key: 'outside_spark', label: 'outside Spark', ms: 902 * S, text: '15m 02s' },
  ]);
  // As the header reads: "Airflow task 20m 03s · Spark 5m 01s · outside Spark 15m 02s".
  assert.equal(taskTimes(view).map((t) => `${t.label} ${t.text}`).join(' \u00b7 '),
    'Airflow task 20m 03s \u00b7 Spark 5m 01s \u00b7 outside Spark 15m 02s');
  const running = airflowTaskView(attemptWith({ ...TASK, state: 'running', running: true }));
  assert.equal(running.running, true);
  assert.equal(running.state.tone, 'run');
});

test('the three parts outside Spark, in words', () => {
  const view = airflowTaskView(attemptWith(TASK));
  assert.deepEqual(OUTSIDE_PARTS.map((p) => p.label), ['before the first Spark call', 'between Spark calls', 'after the last Spark call']);
  assert.equal(outsidePartsText(view),
    '1m 35s before the first Spark call, 13m 07s between Spark calls, 20 s after the last Spark call');
});

test('the main fixture: its airflow_task as the page reads it', () => {
  const attempt = load('attempt.json');
  const view = airflowTaskView(attempt);
  assert.equal(view.state.state, 'success');
  assert.equal(view.wallMs, attempt.wall_ms);
  assert.equal(view.outsideMs, attempt.breakdown.phases.find((p) => p.phase === 'client').ms);
  assert.equal(view.parts.reduce((a, p) => a + p.ms, 0), view.outsideMs);
  assert.deepEqual(taskTimes(view).map((t) => t.text), ['2h 15m 00s', '2h 11m 49s', '3m 11s']);
  assert.equal(taskSpanFirst(attempt.spans, view.spanId), attempt.spans, 'the API sends it first: nothing moves');
});

// Spans in tree order: [id, depth].
const spans = (...rows) => rows.map(([id, depth]) => ({ id, depth }));

test('the Airflow task\'s span and its subtree go first', () => {
  const list = spans(['orphan', 0], ['orphan-child', 1], ['task', 0], ['op', 1], ['job', 2], ['op2', 1], ['late', 0], ['late-child', 1]);
  assert.deepEqual(taskSpanFirst(list, 'task').map((s) => s.id),
    ['task', 'op', 'job', 'op2', 'orphan', 'orphan-child', 'late', 'late-child']);
  const last = spans(['a', 0], ['task', 0], ['op', 1]);
  assert.deepEqual(taskSpanFirst(last, 'task').map((s) => s.id), ['task', 'op', 'a']);
});

test('nothing moves without a task span that is a root further down', () => {
  const list = spans(['task', 0], ['op', 1], ['other', 0]);
  assert.equal(taskSpanFirst(list, 'task'), list, 'first already');
  assert.equal(taskSpanFirst(list, 'missing'), list, 'no such span');
  assert.equal(taskSpanFirst(list, 'op'), list, 'not a root');
  assert.equal(taskSpanFirst(list, ''), list);
  assert.equal(taskSpanFirst(list, undefined), list);
  assert.deepEqual(taskSpanFirst([], 'task'), []);
});
