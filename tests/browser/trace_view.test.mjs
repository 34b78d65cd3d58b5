// The trace view in a real browser (Debian's chromium via playwright-core), over the demo's Airflow
// task attempt: `sparktrace demo --once` leaves it in a store, `sparktrace ui --store` serves it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attemptPageTests, setUpTarget } from './attempt_suite.mjs';
import { currentPath, getJson, load } from './harness.mjs';

// The demo reports its task to sparktrace as Airflow would: the attempt has `airflow_task`.
const target = setUpTarget((harness) => harness.startDemo(), { airflowTask: true });

test('the demo attempt has what the checks need', () => {
  // Preconditions of the checks, so that none of them can pass vacuously.
  const { attempt } = target;
  assert.equal(attempt.kind, 'airflow');
  assert.ok(attempt.spans.length >= 20, `${attempt.spans.length} spans`);
  assert.ok(attempt.critical_path.span_ids.length > 0, 'a critical path');
  assert.ok(attempt.spans.some((s) => !attempt.critical_path.span_ids.includes(s.id)), 'spans off the critical path');
  assert.ok(attempt.executors.known, 'the executor count is known');
  assert.ok(attempt.findings.some((f) => f.recipe_href), 'a finding with a recipe');
  const lanes = new Set(attempt.spans.map((s) => s.lane));
  for (const lane of ['task', 'rpc', 'operation', 'job', 'stage', 'phase']) assert.ok(lanes.has(lane), `a ${lane} span`);
  // Airflow's own task attempt, as the demo reports it: it succeeded, and its operator is known.
  assert.ok(attempt.airflow_task, `the attempt has airflow_task: ${JSON.stringify(attempt.airflow_task)}`);
  assert.equal(attempt.airflow_task.state, 'success');
  assert.ok(attempt.airflow_task.operator, 'an operator class');
});

test('the address the demo printed opens its attempt, shown under the address the list links to', { timeout: 60_000 }, async (t) => {
  const record = await target.freshPage(t);
  await load(record.page, target.base + target.startPath);
  assert.equal(currentPath(record.page), target.pagePath);
  assert.match(target.pagePath, /^\/attempt\?dag=/);
  target.finish(record);
});

test('the demo attempt\'s cost: its simulated executors allocated cores, and the page shows them', { timeout: 60_000 }, async (t) => {
  const { cost } = target.attempt;
  assert.ok(cost, `the attempt has a cost: ${JSON.stringify(cost)}`);
  assert.ok(cost.core_seconds > 0, `core_seconds ${cost.core_seconds}`);
  assert.ok(cost.executor_core_seconds > 0, `executor_core_seconds ${cost.executor_core_seconds}`);
  assert.ok(cost.used_core_seconds > 0, `used_core_seconds ${cost.used_core_seconds}: the demo's stages ran tasks`);
  const record = await target.freshPage(t);
  await load(record.page, target.base + target.pagePath);
  await record.page.waitForSelector('#cost');
  const section = await record.page.$eval('#cost', (el) => ({
    label: document.getElementById(el.getAttribute('aria-labelledby'))?.textContent ?? '',
    terms: [...el.querySelectorAll('dt')].map((dt) => dt.textContent),
    text: el.textContent,
  }));
  assert.equal(section.label, 'What it cost');
  assert.deepEqual(section.terms.slice(0, 3), ['Cores allocated', 'Memory allocated', 'Used by tasks']);
  assert.match(section.text, /core-s/);
  assert.ok(section.text.includes(`Charged: ${cost.basis}.`), section.text);
  target.finish(record);
});

test('the demo attempt\'s what-if estimates: a card of them, and each under the findings it answers', { timeout: 60_000 }, async (t) => {
  const estimates = target.attempt.what_if?.estimates ?? [];
  // The demo waits for executors and writes: the simulator offers executors ready at the start.
  const ready = estimates.find((e) => e.name === 'executors-ready');
  assert.ok(ready, `an executors-ready estimate: ${JSON.stringify(target.attempt.what_if)}`);
  assert.ok(ready.estimated_ms < ready.measured_ms, `ready at the start is faster: ${JSON.stringify(ready)}`);
  const waits = target.attempt.findings.filter((f) => f.id === 'resource-wait-long' && !f.suppressed);
  assert.ok(waits.length > 0, 'a resource-wait-long finding to answer');
  const record = await target.freshPage(t);
  await load(record.page, target.base + target.pagePath);
  await record.page.waitForSelector('#what-if');
  const card = await record.page.$eval('#what-if', (el) => ({
    label: document.getElementById(el.getAttribute('aria-labelledby'))?.textContent ?? '',
    items: [...el.querySelectorAll('li')].map((li) => ({ name: li.dataset.estimate, text: li.textContent })),
  }));
  assert.equal(card.label, 'What a change would buy');
  assert.deepEqual(card.items.map((i) => i.name), estimates.map((e) => e.name));
  assert.match(card.items[0].text, /^with executors ready at the start: ~.+ instead of .+ \((saves ~.+|about the same)\)$/);
  const answered = await record.page.$$eval('#findings li.finding[data-finding-id="resource-wait-long"] .finding-what-if li',
    (items) => items.map((li) => li.textContent));
  assert.ok(answered.some((text) => text.startsWith('with executors ready at the start: ~')), answered.join(' | '));
  const unanswered = await record.page.$$eval('#findings li.finding[data-finding-id="data-skew"] .finding-what-if', (x) => x.length);
  assert.equal(unanswered, 0);
  target.finish(record);
});

test('the task list shows the demo attempt\'s settled cost, and its Cost header sorts by it', { timeout: 60_000 }, async (t) => {
  // The demo ends once its proxy settled the attempt; it has no prices, so the cell is core-hours.
  const list = await getJson(target.base, '/api/v1/tasks?sort=-cost');
  const row = list.tasks.find((task) => task.href === target.pagePath);
  assert.ok(row?.cost, `the demo attempt has a settled cost: ${JSON.stringify(row)}`);
  const record = await target.freshPage(t);
  await load(record.page, target.base + '/');
  const cell = async () => record.page.$eval(`#tasks tr[data-href="${target.pagePath}"] td.col-cost`,
    (td) => ({ text: td.textContent, title: td.title }));
  const shown = await cell();
  assert.equal(shown.text, `${(row.cost.core_seconds / 3600).toFixed(2)} core-h`);
  assert.match(shown.title, /^Allocated: .*core-s/);
  const header = async () => record.page.$eval('#tasks th.col-cost', (th) => ({ sort: th.getAttribute('aria-sort'), text: th.textContent }));
  assert.deepEqual(await header(), { sort: 'none', text: 'Cost' });
  // Most expensive first, then cheapest first; the page and its request carry the order.
  for (const [sort, aria, arrow] of [['-cost', 'descending', '\u2193'], ['cost', 'ascending', '\u2191']]) {
    const requested = record.page.waitForRequest((request) => request.url().includes(`/api/v1/tasks?sort=${encodeURIComponent(sort)}`));
    await record.page.click('#sort-cost');
    await requested;
    await record.page.waitForFunction((want) => document.querySelector('#tasks th.col-cost')?.getAttribute('aria-sort') === want, aria);
    assert.equal(currentPath(record.page), `/?sort=${sort}`);
    assert.deepEqual(await header(), { sort: aria, text: `Cost ${arrow}` });
    assert.equal((await cell()).text, shown.text);
  }
  target.finish(record);
});

attemptPageTests(target, 'demo attempt');
