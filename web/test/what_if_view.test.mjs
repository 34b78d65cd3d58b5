// What-if estimates on the page (what_if_view.js): which estimates answer a finding, and their sentences.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimatesFor, estimateText } from '../assets/what_if_view.js';

const estimates = [
  { name: 'executors-ready', label: 'with executors ready at the start', estimated_ms: 112_000, measured_ms: 304_000,
    saving_ms: 192_000, answers: ['resource-wait-long'] },
  { name: 'executors-8', label: 'with 8 executors from the start', executors: 8, estimated_ms: 250_000,
    measured_ms: 304_000, saving_ms: 54_000, answers: ['slow-spark-jobs', 'resource-wait-long'] },
  { name: 'executors-2', label: 'with 2 executors from the start', executors: 2, estimated_ms: 420_000,
    measured_ms: 304_000, saving_ms: -116_000, answers: ['idle-executors'] },
  { name: 'executors-4', label: 'with 4 executors from the start', executors: 4, estimated_ms: 304_400,
    measured_ms: 304_000, saving_ms: -400, answers: [] },
];

test('a finding gets the estimates that answer it, largest saving first', () => {
  assert.deepEqual(estimatesFor({ id: 'resource-wait-long' }, estimates).map((e) => e.name), ['executors-ready', 'executors-8']);
  assert.deepEqual(estimatesFor({ id: 'idle-executors' }, estimates).map((e) => e.name), ['executors-2']);
  assert.deepEqual(estimatesFor({ id: 'data-skew' }, estimates), []);
  assert.deepEqual(estimatesFor({ id: 'data-skew' }, undefined), []);
});

test('sentences: the estimate against today, and what it saves or costs', () => {
  assert.equal(estimateText(estimates[0]),
    'with executors ready at the start: ~1 min 52 s instead of 5 min 4 s (saves ~3 min 12 s)');
  assert.equal(estimateText(estimates[2]),
    'with 2 executors from the start: ~7 min instead of 5 min 4 s (~1 min 56 s longer)');
  assert.equal(estimateText(estimates[3]),
    'with 4 executors from the start: ~5 min 4 s instead of 5 min 4 s (about the same)');
});
