import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { checkAttempt, checkTasks } from './contract.mjs';
import { namedAttempts, allAttempts, tasksPage } from './fixtures/make_fixtures.mjs';
import { buildLargeAttempt } from './fixtures/make_large_attempt.mjs';

const load = (name) => JSON.parse(readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8'));

test('the committed fixtures are what the scenarios build (run make_fixtures.mjs after a change)', () => {
  const named = namedAttempts();
  for (const [name, attempt] of Object.entries(named)) {
    if (name === 'attempt_running.json') continue;  // its times are relative to a fixed "now" anyway
    assert.deepEqual(load(name), attempt, name);
  }
  assert.deepEqual(load('tasks.json'), tasksPage(allAttempts(named)));
});

for (const name of ['attempt.json', 'attempt_try1.json', 'attempt_running.json', 'trace.json']) {
  test(`${name} conforms to the API contract`, () => {
    assert.deepEqual(checkAttempt(load(name)), []);
  });
}

test('the main attempt has what the page must show', () => {
  const a = load('attempt.json');
  const lanes = new Set(a.spans.map((s) => s.lane));
  for (const lane of ['task', 'rpc', 'operation', 'lifecycle', 'job', 'stage', 'phase']) assert.ok(lanes.has(lane), lane);
  assert.ok(a.findings.length >= 3);
  assert.ok(a.history.baseline.runs >= 5);
  assert.ok(a.critical_path.segments.length > 3);
  assert.equal(a.breakdown.wall_ms, 8100000);
  assert.equal(load('attempt_running.json').in_progress, true);
  assert.ok(load('attempt_running.json').spans.some((s) => s.open));
  assert.equal(load('trace.json').history.baseline, null);
});

test('the main attempt has Airflow\'s task, the root span, with time in each part outside Spark; the others none', () => {
  const a = load('attempt.json');
  const task = a.airflow_task;
  assert.equal(task.state, 'success');
  assert.ok(task.operator.length > 0);
  assert.equal(a.spans[0].id, task.span_id);
  assert.equal(a.spans[0].lane, 'task');
  assert.ok(a.spans.slice(1).every((s) => s.depth > 0), 'every other span is below it');
  for (const k of ['before_first_call_ms', 'between_calls_ms', 'after_last_call_ms']) assert.ok(task.outside_spark[k] > 0, k);
  assert.ok(task.spark_ms > task.outside_spark.ms);
  assert.equal(a.breakdown.phases[0].label, 'outside Spark');
  for (const name of ['attempt_try1.json', 'attempt_running.json', 'trace.json']) assert.equal(load(name).airflow_task, null, name);
});

// A copy of the main attempt with `change` applied to its airflow_task.
function withTask(change) {
  const a = load('attempt.json');
  change(a.airflow_task, a);
  return a;
}

test('the contract catches an airflow_task that does not hold together', () => {
  const cases = {
    'missing field': (t, a) => { delete a.airflow_task; },
    'not an object': (t, a) => { a.airflow_task = 'success'; },
    'state with capitals': (t) => { t.state = 'Success'; },
    'operator not a string': (t) => { t.operator = null; },
    'running but not state running': (t) => { t.running = true; },
    'infinite wall': (t) => { t.wall_ms = Infinity; },
    'a part missing': (t) => { delete t.outside_spark.between_calls_ms; },
    'parts do not add up': (t) => { t.outside_spark.before_first_call_ms += 5000; },
    'spark_ms is not wall - outside': (t) => { t.spark_ms += 1000; },
    'wall is not end - start': (t) => { t.end_ms += 1000; },
    'starts before the attempt': (t) => { t.start_ms -= 1000; t.wall_ms += 1000; },
    'unknown span': (t) => { t.span_id = '0123456789abcdef'; },
    'span of another lane': (t, a) => { t.span_id = a.spans[1].id; },
    'span not a root': (t, a) => { a.spans[0].depth = 1; },
    'outside Spark is not the client phase': (t) => {
      t.outside_spark.after_last_call_ms += 1000; t.outside_spark.ms += 1000; t.spark_ms -= 1000;
    },
    'parts split elsewhere': (t) => { t.outside_spark.before_first_call_ms += 1000; t.outside_spark.after_last_call_ms -= 1000; },
  };
  for (const [name, change] of Object.entries(cases)) {
    assert.notDeepEqual(checkAttempt(withTask(change)), [], name);
  }
  assert.deepEqual(checkAttempt(withTask((t, a) => { a.airflow_task = null; })), [], 'null is fine');
  // A running task: running true with state running, its span still open.
  assert.deepEqual(checkAttempt(withTask((t) => { t.state = 'running'; t.running = true; })), []);
  // A task that started after the attempt's first span (clock skew): only its own time counts.
  assert.deepEqual(checkAttempt(withTask((t) => {
    t.start_ms += 1000; t.wall_ms -= 1000; t.outside_spark.before_first_call_ms -= 1000; t.outside_spark.ms -= 1000;
  })), []);
  // Figures that differ in the last bits of a double still conform.
  assert.deepEqual(checkAttempt(withTask((t) => { t.spark_ms += 1e-7; })), []);
});

test('the task list conforms and pages', () => {
  const all = allAttempts();
  assert.deepEqual(checkTasks(load('tasks.json')), []);
  assert.ok(all.length > 100);
  assert.deepEqual(checkTasks(tasksPage(all, 50, 50)), []);
  for (const a of all) assert.deepEqual(checkAttempt(a), [], a.name);
});

test('the large generated attempt has 20,000 spans and conforms', () => {
  const a = buildLargeAttempt();
  assert.equal(a.spans.length, 20000);
  assert.deepEqual(checkAttempt(a), []);
});
