// The task list's Cost column (task_cost.js) and its sort in the URL (url_state.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { costAriaSort, nextCostSort, sortDescription, taskCostCell } from '../assets/task_cost.js';
import { parseRoute, tasksApiUrl, tasksPageUrl } from '../assets/url_state.js';

const settled = {
  core_seconds: 660, gib_seconds: 900, money: 0.75, idle_fraction: 0.5, regression: false,
  settled_ms: 1764058640000, current: true,
};

test('money when priced, core-hours without prices, the figures in the title', () => {
  const priced = taskCostCell({ state: 'success', cost: settled });
  assert.equal(priced.text, '0.75');
  assert.equal(priced.settled, true);
  assert.equal(priced.title, 'Allocated: 660 core-s, 900 GiB-s, executors idle 50%');
  const unpriced = taskCostCell({ state: 'failed', cost: { ...settled, money: null, core_seconds: 7200 } });
  assert.equal(unpriced.text, '2.00 core-h');
});

test('a dash while running or unsettled, with the reason; a question mark when the cores were not known', () => {
  const running = taskCostCell({ state: 'running', cost: null });
  assert.equal(running.text, '\u2014');
  assert.equal(running.settled, false);
  assert.match(running.title, /^Still running/);
  assert.match(taskCostCell({ state: 'success', cost: null }).title, /^Not settled yet/);
  const unknown = taskCostCell({ state: 'success', cost: { ...settled, core_seconds: null, gib_seconds: null, money: null } });
  assert.equal(unknown.text, '?');
  assert.match(unknown.title, /not known/);
});

test('a regression and figures out of date say so', () => {
  const cell = taskCostCell({ state: 'success', cost: { ...settled, regression: true, current: false } });
  assert.match(cell.title, /regression/);
  assert.match(cell.title, /settled again/);
});

test('the header toggles most expensive first, then cheapest first', () => {
  assert.equal(nextCostSort(undefined), '-cost');
  assert.equal(nextCostSort('-cost'), 'cost');
  assert.equal(nextCostSort('cost'), '-cost');
  assert.equal(costAriaSort(undefined), 'none');
  assert.equal(costAriaSort('-cost'), 'descending');
  assert.equal(costAriaSort('cost'), 'ascending');
  assert.equal(sortDescription(undefined), 'newest first');
  assert.equal(sortDescription('-cost'), 'most expensive first');
  assert.equal(sortDescription('start'), 'oldest first');
});

test('the sort travels in the page URL and the API URL; the default and unknown ones are left out', () => {
  const url = tasksPageUrl({ dag: 'etl', sort: '-cost', offset: 0 });
  assert.equal(url, '/?dag=etl&sort=-cost');
  const [path, search] = [url.slice(0, url.indexOf('?')), url.slice(url.indexOf('?'))];
  assert.deepEqual(parseRoute(path, search), { page: 'tasks', query: { dag: 'etl', sort: '-cost', offset: 0 } });
  assert.equal(tasksApiUrl({ sort: 'cost', offset: 0 }), '/api/v1/tasks?sort=cost&limit=50&offset=0');
  assert.deepEqual(parseRoute('/', '?sort=-start'), { page: 'tasks', query: { offset: 0 } });
  assert.deepEqual(parseRoute('/', '?sort=bogus'), { page: 'tasks', query: { offset: 0 } });
  assert.equal(tasksPageUrl({ sort: '-start', offset: 0 }), '/');
});
