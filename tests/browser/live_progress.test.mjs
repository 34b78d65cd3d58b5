// A running Spark Connect operation's live progress (Spark 4's execution_progress) on its attempt
// page, in a real browser, through the real proxy: `sparktrace sim` plays a Spark 4 server that
// streams a slow operation's progress, `sparktrace proxy` in front of it writes the running
// operation's snapshots to its store, and one ExecutePlan with an Airflow attempt's identity runs
// through it while the page is open. One page load: the running operation's detail shows its tasks,
// stages and bytes read; the page's own poll brings larger figures without a reload; once the
// operation has ended the page shows it ended, with the final figures and its progress events.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import {
  Harness, artifactsDir, executePlan, load, openPage, waitForApi,
} from './harness.mjs';
import { assertNoCspViolations, assertNoErrors, seriousAxeViolations } from './checks.mjs';

// The operation's shape (sim/execution.cc): a scan stage of SCAN_TASKS tasks of 8 MiB each, then a
// reduce stage of a quarter as many; PROGRESS_STEPS progress responses, then BATCHES Arrow batches,
// STEP_MS apart: about 9.8 s in all, of which 7 s of progress. The page opens at the first tasks
// done and polls every 2 s: its first poll comes while the operation still runs, with a margin for a
// slow (sanitizer) build and a loaded CI machine (at 400 ms a step, 4 s of progress, a clean-clone run
// saw the operation end during the page's axe check and screenshot, before the poll that grows), and
// the test stays quick.
const SCAN_TASKS = 8;
const TASKS_TOTAL = SCAN_TASKS + SCAN_TASKS / 4;
const PROGRESS_STEPS = 10;
const BATCHES = 4;
const STEP_MS = 700;
const FINAL_BYTES_TEXT = `${SCAN_TASKS * 8} MiB read`;
const OPERATION = 'spark_connect.operation';
const PROGRESS_EVENT = 'spark.connect.progress';
const IDENTITY = { dag_id: 'live_dag', task_id: 'slow_query', run_id: 'manual__live', try_number: 1, map_index: -1 };

const harness = new Harness();
const target = {};

before(async () => {
  const server = await harness.startSimAndProxy({
    simArgs: ['--progress-tasks', String(SCAN_TASKS)],
    // A snapshot of the running operation in the store every 200 ms, and every progress update kept
    // as an event: no interval between events, since the updates, sent STEP_MS apart, can reach a
    // busy machine's proxy closer together than any interval (a CI run lost one to 100 ms), and the
    // test counts them.
    proxyArgs: ['--progress-snapshot-interval', '200ms', '--progress-event-interval', '0ms'],
  });
  Object.assign(target, server);
  target.browser = await harness.launchBrowser();
}, { timeout: 60_000 });
after(() => harness.close(), { timeout: 60_000 });

// The detail panel's progress row as the page shows it now, or null when it has none.
function readDetailProgress(page) {
  return page.evaluate(() => {
    const dd = document.querySelector('#detail dd[data-field="progress"]');
    if (!dd) return null;
    const text = dd.textContent.trim();
    const tasks = /(\d+)\/(\d+) tasks/.exec(text);
    return {
      label: dd.previousElementSibling.textContent,
      text,
      tasksDone: tasks ? Number(tasks[1]) : null,
      tasksTotal: tasks ? Number(tasks[2]) : null,
      bar: Number(dd.querySelector('progress')?.value ?? Number.NaN),
    };
  });
}

test('a running operation\'s progress on its page: shown, grows on the poll, ends with the final figures', { timeout: 60_000 }, async (t) => {
  const { base, grpc, proxy, browser } = target;
  const query = new URLSearchParams({ dag: IDENTITY.dag_id, task: IDENTITY.task_id, run: IDENTITY.run_id, try: String(IDENTITY.try_number) });
  const call = executePlan(grpc, IDENTITY, {
    clientType: '_SPARK_CONNECT_PYTHON spark/4.0.0 os/linux python/3.11',
    metadata: {
      'x-sim-progress-steps': String(PROGRESS_STEPS), 'x-sim-batches': String(BATCHES), 'x-sim-batch-interval-ms': String(STEP_MS),
    },
  });
  let callOver = false;
  call.then(() => { callOver = true; }, () => { callOver = true; });
  t.after(() => call.catch(() => {}));

  // The store has the running operation with some tasks done: the moment to open its page.
  const running = await waitForApi(base, `/api/v1/attempt?${query}`, (attempt) => {
    const op = attempt.spans.find((s) => s.name === OPERATION);
    return op?.open && op.progress?.tasks_done > 0 ? op : null;
  }, { what: 'the running operation with tasks done', server: proxy, timeoutMs: 15_000 });
  assert.ok(!callOver, 'the operation was still running when its progress reached the store');

  const record = await openPage(browser);
  t.after(() => record.context.close());
  const { page } = record;
  const pagePath = `/attempt?${query}&span=${running.id}`;
  const documents = () => record.requests.filter((url) => url.startsWith(`${base}/attempt?`)).length;
  await load(page, base + pagePath);
  await page.evaluate(() => { window.sparktraceSameDocument = true; });

  // 1. Running: the selected operation's detail says so, with tasks, stages and bytes read so far.
  const first = await readDetailProgress(page);
  assert.ok(first, 'the running operation\'s detail shows its progress');
  assert.equal(first.label, 'Progress', first.text);
  assert.match(first.text, /^\d+% · \d+\/\d+ tasks · \d+\/\d+ stages · [\d.]+ [KMG]?i?B read/, first.text);
  assert.ok(first.tasksDone >= 1 && first.tasksDone < TASKS_TOTAL, `tasks done so far: ${first.text}`);
  // The scan stage's tasks; with the reduce stage's once it has started (Spark lists a stage once it
  // is submitted).
  assert.ok([SCAN_TASKS, TASKS_TOTAL].includes(first.tasksTotal), `tasks in all so far: ${first.text}`);
  assert.ok(first.bar > 0 && first.bar < 1, `the bar is part full: ${first.bar}`);
  await page.waitForSelector('#detail dd:text-matches("still running")', { state: 'attached' });
  await page.waitForSelector('.attempt-head .live', { state: 'attached' });
  // What a screen reader gets: the timeline row and the detail's bar both say how far it is.
  await page.getByRole('treeitem', { name: /still running, \d+% of tasks done/ }).waitFor({ state: 'attached' });
  await page.getByRole('progressbar', { name: /^\d+% of tasks done$/ }).waitFor({ state: 'attached' });
  assert.equal(await page.locator(`#gantt [role=treeitem][data-row-id="${running.id}"] .row-progress`).count(), 1,
    'the operation\'s timeline row has its bar');
  const axeStarted = Date.now();
  const violations = await seriousAxeViolations(page);
  assert.deepEqual(violations, [], `axe-core on the running attempt:\n${JSON.stringify(violations, null, 2)}`);
  t.diagnostic(`axe on the running page: ${Date.now() - axeStarted} ms`);
  await page.screenshot({ path: path.join(artifactsDir(), 'live-progress-running.png'), fullPage: true });

  // 2. The page's poll: more tasks done, still running, without a reload.
  const grown = await page.waitForFunction((before) => {
    const dd = document.querySelector('#detail dd[data-field="progress"]');
    const tasks = dd && /(\d+)\/\d+ tasks/.exec(dd.textContent);
    return tasks && Number(tasks[1]) > before ? { label: dd.previousElementSibling.textContent, text: dd.textContent.trim() } : null;
  }, first.tasksDone, { timeout: 10_000 }).then((handle) => handle.jsonValue());
  assert.equal(grown.label, 'Progress', `the figures grew while the operation ran: ${grown.text}`);

  // 3. Ended: the same page shows the operation ended, with the final figures and its events.
  await page.waitForSelector('#detail dt:text-is("Final progress")', { timeout: 15_000 });
  await call;
  const final = await readDetailProgress(page);
  assert.equal(final.text, `100% · ${TASKS_TOTAL}/${TASKS_TOTAL} tasks · 2/2 stages · ${FINAL_BYTES_TEXT}`);
  assert.equal(final.bar, 1);
  assert.equal(await page.locator('#detail dd:text-matches("still running")').count(), 0, 'no longer running');
  assert.equal(await page.locator('.attempt-head .live').count(), 0, 'the page no longer says it updates');
  assert.equal(await page.locator('#gantt .row-progress').count(), 0, 'an ended operation has no row bar');
  // Its events in one time line: every progress update, then the first batch (the sim sends all its
  // progress first); in the order of their times in the attempt JSON.
  const shownEvents = await page.locator('#detail .events-list li').evaluateAll((items) => items.map((li) => ({
    name: li.querySelector('.ev-name').textContent, attrs: li.querySelector('.ev-attrs')?.textContent ?? '',
  })));
  const progressShown = shownEvents.filter((e) => e.name === PROGRESS_EVENT);
  assert.equal(progressShown.length, PROGRESS_STEPS, 'one progress event per update');
  assert.match(progressShown.at(-1).attrs, new RegExp(`spark\\.connect\\.progress\\.tasks_done=${TASKS_TOTAL}\\b`));
  const names = shownEvents.map((e) => e.name);
  assert.ok(names.indexOf('first_batch') > names.lastIndexOf(PROGRESS_EVENT), `events in time order: ${names}`);
  const ended = await waitForApi(base, `/api/v1/attempt?${query}`,
    (attempt) => attempt.spans.find((s) => s.id === running.id && !s.open), { what: 'the ended operation', server: proxy });
  assert.deepEqual(names, ended.events.filter((e) => e.name !== 'sparktrace.finding')
    .sort((a, b) => a.time_ms - b.time_ms).map((e) => e.name));

  assert.equal(await page.evaluate(() => window.sparktraceSameDocument), true, 'the page was not reloaded');
  assert.equal(documents(), 1, 'one document request');
  await page.screenshot({ path: path.join(artifactsDir(), 'live-progress-ended.png'), fullPage: true });
  assertNoCspViolations(record);
  assertNoErrors(record);
});
