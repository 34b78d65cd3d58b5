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
  for (const lane of ['rpc', 'operation', 'lifecycle', 'job', 'stage', 'phase']) assert.ok(lanes.has(lane), lane);
  assert.ok(a.findings.length >= 3);
  assert.ok(a.history.baseline.runs >= 5);
  assert.ok(a.critical_path.segments.length > 3);
  assert.equal(a.breakdown.wall_ms, 8100000);
  assert.equal(load('attempt_running.json').in_progress, true);
  assert.ok(load('attempt_running.json').spans.some((s) => s.open));
  assert.equal(load('trace.json').history.baseline, null);
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
