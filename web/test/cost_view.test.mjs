// The cost section's text (cost_view.js): resource-seconds, idle share, money, and nothing without cost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { costRows, formatMoney, formatResourceSeconds } from '../assets/cost_view.js';

const attempt = JSON.parse(readFileSync(new URL('./fixtures/attempt.json', import.meta.url)));

test('resource-seconds: seconds, with hours beside them from an hour on', () => {
  assert.equal(formatResourceSeconds(12.345, 'core'), '12.3 core-s');
  assert.equal(formatResourceSeconds(660, 'core'), '660 core-s');
  assert.equal(formatResourceSeconds(83160, 'core'), '83,160 core-s (23.1 core-h)');
  assert.equal(formatResourceSeconds(0, 'GiB'), '0 GiB-s');
});

test('money: no currency symbol, cents for small amounts', () => {
  assert.equal(formatMoney(1.4957), '1.50');
  assert.equal(formatMoney(0.0066), '0.0066');
  assert.equal(formatMoney(1234.4), '1,234');
});

test('the fixture attempt: allocation, use, idle share and money', () => {
  const rows = Object.fromEntries(costRows(attempt.cost));
  assert.equal(rows['Cores allocated'], '83,160 core-s (23.1 core-h) (driver 8,100 core-s (2.3 core-h))');
  assert.equal(rows['Memory allocated'], '204,405 GiB-s (56.8 GiB-h)');
  assert.equal(rows['Used by tasks'], '41,283 core-s (11.5 core-h) \u00b7 executors idle 45%');
  assert.equal(rows.Cost, '1.50');
});

test('without prices no money row; unknown memory and idle share say so; no cost, no section', () => {
  const rows = costRows({ ...attempt.cost, money: null, gib_seconds: null, idle_fraction: null });
  assert.deepEqual(rows.map(([label]) => label), ['Cores allocated', 'Memory allocated', 'Used by tasks']);
  assert.match(rows[1][1], /not known/);
  assert.equal(rows[2][1], '41,283 core-s (11.5 core-h)');
  assert.equal(costRows(null), null);
});
