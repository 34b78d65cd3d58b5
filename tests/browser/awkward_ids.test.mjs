// Airflow attempts whose ids break URL paths, in a real browser: dag id "..", task id "." (both valid
// Airflow ids, and dot segments a browser drops from a path, "%2E" spelled or not), a run id with "/",
// "?", "#", "%", "&", "+", spaces and escapes that look like dots and UTF-8, a mapped attempt and one
// without a run id. They are made by Spark Connect calls through `sparktrace proxy` (in front of
// `sparktrace sim`) with those x-airflow-* ids; then each is reached from the task list by a click,
// from its address typed or bookmarked, and from the tabs of its other tries.
// (gRPC metadata, and so what the proxy accepts as an id, is printable ASCII: Unicode ids are covered
// by tests/unit/traceview/traceview_api_test.cc and web/test/url_state.test.mjs.)

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Harness, currentPath, load, openPage, waitReady } from './harness.mjs';
import { assertNoAirflowTaskShown, assertNoCspViolations, assertNoErrors, assertSameOrigin, readAirflowHeader } from './checks.mjs';

const RUN = 'manual__2024-01-01T00:00:00+00:00/a?b=c&d=e#frag 100% +x %2E%2E/../. caf%C3%A9';
const ATTEMPTS = [
  { dag_id: '..', task_id: '.', run_id: RUN, try_number: 1, map_index: -1 },
  { dag_id: '..', task_id: '.', run_id: RUN, try_number: 2, map_index: -1 },
  { dag_id: '..', task_id: '.', run_id: RUN, try_number: 2, map_index: 3 },
  { dag_id: '.', task_id: '..', run_id: '', try_number: 1, map_index: -1 },
];
const FIELDS = ['dag_id', 'task_id', 'run_id', 'try_number', 'map_index'];

const harness = new Harness();
const records = [];
let server;  // {base, rows}
let browser;

before(async () => {
  server = await harness.startSimProxy(ATTEMPTS);
  browser = await harness.launchBrowser();
}, { timeout: 200_000 });

after(() => harness.close(), { timeout: 60_000 });

async function freshPage(t) {
  const record = await openPage(browser);
  records.push(record);
  t.after(() => record.context.close());
  return record;
}

function identityOf(row) {
  return Object.fromEntries(FIELDS.map((f) => [f, row[f]]));
}

function rowOf(identity) {
  const row = server.rows.find((r) => FIELDS.every((f) => r[f] === identity[f]));
  assert.ok(row, `the task list has ${JSON.stringify(identity)}`);
  return row;
}

// The attempt page on screen: its identity as the header shows it ("DAG", "Task", "Run", "Try", "Map index").
async function shownIdentity(page) {
  const items = await page.$$eval('.attempt-head dl.identity > div', (divs) => divs.map((d) => [
    d.querySelector('dt').textContent, d.querySelector('dd').textContent]));
  const shown = Object.fromEntries(items);
  return {
    dag_id: shown.DAG, task_id: shown.Task, run_id: shown.Run, try_number: Number(shown.Try),
    map_index: shown['Map index'] === undefined ? -1 : Number(shown['Map index']),
  };
}

// Runs `action` (a click, a goto) and answers the attempt JSON the page then fetched, with its URL.
async function attemptFetchedBy(page, action) {
  const [response] = await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/attempt'),
    action(),
  ]);
  assert.equal(response.status(), 200, `${response.url()} answered ${response.status()}`);
  return { url: new URL(response.url()), attempt: await response.json() };
}

function finish(record) {
  assertNoCspViolations(record);
  assertNoErrors(record);
}

test('every awkward attempt is listed with its own link', () => {
  assert.deepEqual(server.rows.map(identityOf).map((i) => JSON.stringify(i)).sort(),
    ATTEMPTS.map((i) => JSON.stringify(i)).sort());
  const hrefs = server.rows.map((r) => r.href);
  assert.equal(new Set(hrefs).size, hrefs.length);
  for (const href of hrefs) assert.match(href, /^\/attempt\?dag=/);
});

test('a click in the task list opens each awkward attempt\'s page, with its data', { timeout: 120_000 }, async (t) => {
  const record = await freshPage(t);
  const { page } = record;
  for (const row of server.rows) {
    await load(page, `${server.base}/`);
    const links = page.locator('table#tasks a.row-link');
    const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    const index = hrefs.indexOf(row.href);
    assert.ok(index >= 0, `the list shows a link to ${row.href}: ${JSON.stringify(hrefs)}`);

    const { url, attempt } = await attemptFetchedBy(page, () => links.nth(index).click());
    await waitReady(page);
    // The address bar holds the link exactly as the API gave it: nothing was resolved away.
    assert.equal(currentPath(page), row.href);
    assert.deepEqual(identityOf(attempt.identity), identityOf(row), `the page asked ${url.pathname}${url.search}`);
    assert.deepEqual(await shownIdentity(page), identityOf(row));
    await page.waitForSelector('#breakdown');
  }
  finish(record);
});

test('each awkward attempt\'s address opens its page when typed or bookmarked', { timeout: 120_000 }, async (t) => {
  for (const row of server.rows) {
    const record = await freshPage(t);
    const { page } = record;
    const { attempt } = await attemptFetchedBy(page, () => page.goto(server.base + row.href, { waitUntil: 'domcontentloaded' }));
    await waitReady(page);
    assert.equal(currentPath(page), row.href);
    assert.deepEqual(identityOf(attempt.identity), identityOf(row));
    assert.deepEqual(await shownIdentity(page), identityOf(row));
    // Calls without the Airflow plugin: no airflow_task, and the header shows nothing of one.
    assert.equal(attempt.airflow_task ?? null, null, 'no airflow_task');
    assertNoAirflowTaskShown(await readAirflowHeader(page));
    // Reloading (what a bookmark does again) shows the same attempt.
    await page.reload({ waitUntil: 'domcontentloaded' });
    await waitReady(page);
    assert.deepEqual(await shownIdentity(page), identityOf(row));
    finish(record);
  }
});

test('the tabs of the other tries, back and forward move between the awkward attempts', { timeout: 60_000 }, async (t) => {
  const record = await freshPage(t);
  const { page } = record;
  const second = rowOf(ATTEMPTS[1]);
  const first = rowOf(ATTEMPTS[0]);
  await load(page, server.base + second.href);
  const tab = page.locator('nav.tries a.try-tab', { hasText: 'Try 1' });
  assert.equal(await tab.getAttribute('href'), first.href);
  await attemptFetchedBy(page, () => tab.click());
  await waitReady(page);
  assert.equal(currentPath(page), first.href);
  assert.deepEqual(await shownIdentity(page), identityOf(first));

  await page.goBack();
  await page.waitForURL((url) => url.pathname + url.search === second.href);
  await waitReady(page);
  assert.deepEqual(await shownIdentity(page), identityOf(second));
  await page.goForward();
  await page.waitForURL((url) => url.pathname + url.search === first.href);
  await waitReady(page);
  assert.deepEqual(await shownIdentity(page), identityOf(first));
  finish(record);
});

test('the view of an awkward attempt goes into its address and comes back from it', { timeout: 60_000 }, async (t) => {
  const record = await freshPage(t);
  const { page } = record;
  const row = rowOf(ATTEMPTS[2]);
  await load(page, server.base + row.href);
  await page.fill('#find', 'ExecutePlan');
  // The search runs a moment after the last key, then the URL takes the text.
  await page.waitForURL((url) => url.searchParams.get('find') === 'ExecutePlan');
  const withView = currentPath(page);
  assert.ok(withView.startsWith(`${row.href}&`), `${withView} keeps the attempt's ids first`);

  const again = await freshPage(t);
  await load(again.page, server.base + withView);
  assert.equal(currentPath(again.page), withView);
  assert.deepEqual(await shownIdentity(again.page), identityOf(row));
  assert.equal(await again.page.inputValue('#find'), 'ExecutePlan');
  finish(record);
  finish(again);
});

// Registered last: it reads the requests of every page the tests above opened.
test('no request leaves the page\'s origin', () => {
  const all = records.flatMap((r) => r.requests);
  assertSameOrigin(all, server.base);
  assert.ok(all.some((url) => url.includes('/api/v1/attempt?')), 'the pages read the attempt API');
});
