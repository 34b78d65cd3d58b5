import { test } from 'node:test';
import assert from 'node:assert/strict';
import { progressSummary } from '../assets/progress.js';

const RUNNING = { stages_done: 1, stages_total: 2, tasks_done: 9, tasks_total: 10, input_bytes_read: 67108864, inflight_tasks: 1, updates: 3 };

test('a running operation reads as tasks, stages, bytes and tasks in flight', () => {
  const summary = progressSummary(RUNNING);
  assert.equal(summary.fraction, 0.9);
  assert.equal(summary.percent, '90%');
  assert.equal(summary.text, '9/10 tasks \u00b7 1/2 stages \u00b7 64 MiB read \u00b7 1 running');
});

test('no progress, or progress without task counts, shows nothing', () => {
  assert.equal(progressSummary(null), null);
  assert.equal(progressSummary(undefined), null);
  assert.equal(progressSummary({ stages_done: 1 }), null);
  assert.equal(progressSummary({ ...RUNNING, tasks_done: -1 }), null);
});

test('the bar stops at full and an operation without tasks yet is at zero', () => {
  assert.equal(progressSummary({ ...RUNNING, tasks_done: 12 }).fraction, 1);
  const none = progressSummary({ stages_done: 0, stages_total: 0, tasks_done: 0, tasks_total: 0, input_bytes_read: 0, inflight_tasks: 0 });
  assert.equal(none.fraction, 0);
  assert.equal(none.text, '0/0 tasks \u00b7 0/0 stages \u00b7 0 B read');
});
