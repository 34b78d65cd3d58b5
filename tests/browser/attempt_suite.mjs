// The attempt page's tests, registered for one target (the demo's Airflow task attempt, or the trace
// of a real Spark event log): every figure on screen is checked against the JSON API the page reads
// (docs/trace-view-api.md), in pages that run under their own Content-Security-Policy and must log
// no error and meet no CSP violation.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Harness, apiPathOf, currentPath, getJson, load, openPage, waitReady } from './harness.mjs';
import {
  assertAirflowTaskShown, assertBarsPlaced, assertBreakdownMatches, assertCriticalBars, assertNoAirflowTaskShown,
  assertNoCspViolations, assertNoErrors, assertSameOrigin, descendantsOf, readAirflowHeader, readBreakdown, readGantt,
  spansMatching, spansMatchingLabelOrName, waitGantt,
} from './checks.mjs';

const SEARCH_TERMS = ['stage', 'ExecutePlan', 'resource wait', 'compute', 'job'];

// Waits until the URL's query satisfies `predicate(URLSearchParams)` (the page writes its view there
// with history.replaceState, a moment after the change).
export async function waitQuery(page, predicate, what) {
  try {
    await page.waitForURL((url) => predicate(url.searchParams));
  } catch (error) {
    throw new Error(`the URL never got ${what} (now ${currentPath(page)}): ${error.message}`);
  }
}

export async function waitSelected(page, id) {
  await page.waitForSelector(`#gantt [role=treeitem][data-row-id="${id}"][aria-selected="true"]`);
  assert.equal((await page.textContent('#detail [data-field=id]')).trim(), id, '#detail [data-field=id] shows the selected span');
}

function params(page) {
  return new URL(page.url()).searchParams;
}

// The task list's link to `attempt`.
async function listedHref(base, attempt) {
  const list = await getJson(base, '/api/v1/tasks?limit=200');
  const fields = ['dag_id', 'task_id', 'run_id', 'try_number', 'map_index'];
  const row = list.tasks.find((task) => (attempt.kind === 'airflow'
    ? task.kind === 'airflow' && fields.every((f) => task[f] === attempt.identity[f])
    : task.kind === 'trace' && task.trace_ids[0] === attempt.trace_ids[0]));
  assert.ok(row, `the task list links to ${JSON.stringify(attempt.identity ?? attempt.trace_ids)}`);
  return row.href;
}

// `path` with more query parameters.
export function withParams(path, params) {
  return `${path}${path.includes('?') ? '&' : '?'}${params}`;
}

// Starts the target in before() and stops everything in after(). `start(harness)` answers
// {base, pagePath}. `airflowTask`: whether the target's attempt must have Airflow's own task attempt
// (`airflow_task`; the demo reports its task) or must have none (a plain Spark application, calls
// without the Airflow plugin). Returns the shared state: {harness, base, pagePath, startPath, attempt,
// airflowTask, browser, records, freshPage(t, options), finish(record)}.
export function setUpTarget(start, { airflowTask = false } = {}) {
  const harness = new Harness();
  const target = { harness, records: [], airflowTask };
  before(async () => {
    Object.assign(target, await start(harness));
    target.attempt = await getJson(target.base, apiPathOf(target.pagePath));
    // The tests use the address the task list links to; `start` may have given another shape of it
    // (the demo prints the earlier /tasks/… address), kept as startPath.
    target.startPath = target.pagePath;
    target.pagePath = await listedHref(target.base, target.attempt);
    target.browser = await harness.launchBrowser();
  }, { timeout: 200_000 });
  after(() => harness.close(), { timeout: 60_000 });

  // A fresh context and page (the real CSP unless asked otherwise); closed when the test ends.
  target.freshPage = async (t, options) => {
    const record = await openPage(target.browser, options);
    target.records.push(record);
    t.after(() => record.context.close());
    return record;
  };
  target.finish = (record) => {
    assertNoCspViolations(record);
    assertNoErrors(record);
  };
  return target;
}

export function attemptPageTests(target, what) {
  test(`${what}: the breakdown bar has the API phases' widths, to the pixel`, { timeout: 60_000 }, async (t) => {
    const record = await target.freshPage(t);
    const response = await load(record.page, target.base + target.pagePath);
    assert.match(response.headers()['content-security-policy'] ?? '', /script-src 'self'/, 'the page is served under its CSP');
    assertBreakdownMatches(await readBreakdown(record.page), target.attempt);
    target.finish(record);
  });

  test(`${what}: the Gantt draws each visible span where the API puts it, the critical path marked; the toggle turns it off`, { timeout: 60_000 }, async (t) => {
    const { attempt } = target;
    const record = await target.freshPage(t);
    const { page } = record;
    await load(page, target.base + target.pagePath);
    await waitGantt(page);
    let gantt = await readGantt(page);

    // Small traces open fully: the rows on screen are the first spans, in the API's tree order.
    assert.ok(gantt.rows.length >= Math.min(attempt.spans.length, 15), `${gantt.rows.length} rows drawn`);
    assert.deepEqual(gantt.rows.map((r) => r.id), attempt.spans.slice(0, gantt.rows.length).map((s) => s.id));
    // At full zoom every span is in the window: one bar per row, placed on the time axis.
    assert.deepEqual(gantt.bars.map((b) => b.id).sort(), gantt.rows.map((r) => r.id).sort(), 'a bar [data-span-id] for each visible row');
    assertBarsPlaced(gantt, attempt, 0, attempt.wall_ms);

    const critical = assertCriticalBars(gantt, attempt);
    assert.ok(critical > 0, 'critical bars on screen');
    assert.ok(critical < gantt.bars.length, 'non-critical bars on screen');

    await page.click('#toggle-critical');
    assert.equal(await page.isChecked('#toggle-critical'), false);
    await page.waitForSelector('#gantt svg.bars .critical, #gantt svg.bars .crit-seg', { state: 'detached' });
    gantt = await readGantt(page);
    assert.ok(gantt.bars.length > 0, 'bars are still drawn with the overlay off');
    assert.deepEqual(gantt.bars.filter((b) => b.classes.includes('critical')).map((b) => b.id), [], 'no critical bar with the overlay off');

    await page.click('#toggle-critical');
    await page.waitForSelector('#gantt svg.bars rect.bar.critical', { state: 'attached' });
    assert.equal(assertCriticalBars(await readGantt(page), attempt), critical, 'the overlay comes back');
    target.finish(record);
  });

  const airflowWhat = target.airflowTask
    ? 'the header shows Airflow\'s task beside Spark\'s and the breakdown the time outside Spark in its three parts; the task\'s span is the top row'
    : 'without Airflow\'s task (airflow_task null) the header shows nothing of it';
  test(`${what}: ${airflowWhat}`, { timeout: 60_000 }, async (t) => {
    const { attempt } = target;
    const task = attempt.airflow_task;
    if (target.airflowTask) {
      assert.ok(task !== null && typeof task === 'object',
        `the API's attempt has airflow_task (the demo reports its Airflow task): ${JSON.stringify(task)}`);
    } else {
      assert.equal(task ?? null, null, 'the API\'s attempt has no airflow_task');
    }
    const client = attempt.breakdown.phases.find((p) => p.phase === 'client');
    assert.equal(client.label, 'outside Spark', 'the API labels the client phase "outside Spark"');

    const record = await target.freshPage(t);
    const { page } = record;
    await load(page, target.base + target.pagePath);
    await waitGantt(page);
    const shown = await readAirflowHeader(page);
    assert.equal(shown.clientLegend, client.label, 'the legend names the client phase as the API does');
    if (!task) {
      assertNoAirflowTaskShown(shown);
      target.finish(record);
      return;
    }
    assertAirflowTaskShown(shown, attempt);
    // The task's span: the first of the API's spans, a root in lane "task", and the Gantt's top row.
    const span = attempt.spans.find((s) => s.id === task.span_id);
    assert.ok(span, `airflow_task.span_id ${task.span_id} is one of the attempt's spans`);
    assert.equal(span.lane, 'task');
    assert.equal(span.depth, 0, 'the task\'s span is a root');
    assert.equal(attempt.spans[0].id, task.span_id, 'the API sends the task\'s span first');
    const gantt = await readGantt(page);
    assert.equal(gantt.rows[0]?.id, task.span_id, 'the Gantt\'s top row is the task\'s span');
    assert.equal(await page.getAttribute(`#gantt [role=treeitem][data-row-id="${task.span_id}"]`, 'aria-level'), '1');
    assert.ok(attempt.spans.slice(1).every((s) => s.depth > 0), 'every other span is below it');
    target.finish(record);
  });

  test(`${what}: the executor lane shows the known executor count`, { timeout: 60_000 }, async (t) => {
    const { executors } = target.attempt;
    const record = await target.freshPage(t);
    await load(record.page, target.base + target.pagePath);
    await waitGantt(record.page);
    assert.ok(executors.known, 'the API knows the executor count');
    const lane = await record.page.$eval('#executor-lane', (svg) => ({
      label: svg.getAttribute('aria-label'), step: svg.querySelector('.executor-step')?.getAttribute('d') ?? '',
      width: svg.getBoundingClientRect().width,
    }));
    assert.ok(lane.width > 100, `#executor-lane is laid out (${lane.width} px)`);
    assert.match(lane.label, new RegExp(`to ${executors.max}\\b`), `its label names the maximum, ${executors.max}`);
    assert.ok(lane.step.length > 10 && lane.step !== 'M0,0', `a step path is drawn: ${lane.step}`);
    target.finish(record);
  });

  test(`${what}: a deep link restores the selection and the zoom; interacting updates the URL`, { timeout: 90_000 }, async (t) => {
    const { attempt } = target;
    const record = await target.freshPage(t);
    const { page } = record;
    // A stage on the critical path, deep in the tree; a window around it, in whole ms.
    const index = attempt.spans.findIndex((s) => s.lane === 'stage' && attempt.critical_path.span_ids.includes(s.id));
    assert.ok(index > 0 && index + 1 < attempt.spans.length, 'a critical stage with a row after it');
    const span = attempt.spans[index];
    const next = attempt.spans[index + 1];
    const pad = Math.max((span.end_ms - span.start_ms) * 0.05, 20);
    const from = Math.max(Math.floor(span.start_ms - attempt.start_ms - pad), 0);
    const to = Math.min(Math.ceil(span.end_ms - attempt.start_ms + pad), Math.floor(attempt.wall_ms));
    assert.ok(to - from < attempt.wall_ms * 0.9, 'the window is a real zoom');

    await load(page, target.base + withParams(target.pagePath, `span=${span.id}&from=${from}&to=${to}`));
    await waitGantt(page);
    await waitSelected(page, span.id);
    assert.equal(await page.isDisabled('#zoom-reset'), false, 'zoomed in: "Reset zoom" is enabled');
    const gantt = await readGantt(page);
    assert.ok(gantt.bars.some((b) => b.id === span.id), 'the selected span\'s bar is on screen');
    assert.equal(gantt.activeDescendant, gantt.rows.find((r) => r.id === span.id).elementId, 'aria-activedescendant is the selected row');
    // Bars are placed for the window [from, to], not for the whole attempt.
    assert.ok(assertBarsPlaced(gantt, attempt, from, to) > 0);
    assert.equal(params(page).get('span'), span.id);

    // Arrow down: the next row is selected and the URL follows.
    await page.focus('#gantt [role=tree]');
    await page.keyboard.press('ArrowDown');
    await waitSelected(page, next.id);
    await waitQuery(page, (q) => q.get('span') === next.id, `span=${next.id}`);

    // Zoom in: a window 1.6 times narrower in the URL; reset: no window.
    await page.click('#zoom-in');
    const narrower = (to - from) / 1.6;
    await waitQuery(page, (q) => q.has('from') && q.has('to')
      && Math.abs(Number(q.get('to')) - Number(q.get('from')) - narrower) < 0.01, `a window ${narrower} ms wide`);
    await page.click('#zoom-reset');
    await waitQuery(page, (q) => !q.has('from'), 'no from after "Reset zoom"');
    assert.equal(params(page).get('to'), null);
    assert.equal(params(page).get('span'), next.id, 'the selection stays');

    // Search text goes into the URL too, and a reload restores all of it.
    await page.fill('#find', 'stage');
    await waitQuery(page, (q) => q.get('find') === 'stage', 'find=stage');
    await page.reload({ waitUntil: 'domcontentloaded' });
    await waitReady(page);
    await waitGantt(page);
    await waitSelected(page, next.id);
    assert.equal(await page.inputValue('#find'), 'stage');
    const expected = spansMatching(attempt, 'stage').length;
    assert.equal((await page.textContent('#find-count')).trim(), `${expected} match${expected === 1 ? '' : 'es'}`);
    target.finish(record);
  });

  test(`${what}: keyboard: Up and Down move the selection, Left folds a row and Right unfolds it`, { timeout: 60_000 }, async (t) => {
    const { spans } = target.attempt;
    const record = await target.freshPage(t);
    const { page } = record;
    await load(page, target.base + target.pagePath);
    await waitGantt(page);
    await page.focus('#gantt [role=tree]');
    await page.keyboard.press('ArrowDown');
    await waitSelected(page, spans[0].id);
    await page.keyboard.press('ArrowDown');
    await waitSelected(page, spans[1].id);
    await page.keyboard.press('ArrowUp');
    await waitSelected(page, spans[0].id);

    // Down to the first row below the root that has children, then fold it.
    const k = spans.findIndex((s, i) => i > 0 && s.has_children);
    const children = descendantsOf(spans, k);
    assert.ok(k > 0 && children.length > 0, 'a row below the root with descendants');
    for (let i = 0; i < k; i += 1) await page.keyboard.press('ArrowDown');
    await waitSelected(page, spans[k].id);
    const row = `#gantt [role=treeitem][data-row-id="${spans[k].id}"]`;
    assert.equal(await page.getAttribute(row, 'aria-expanded'), 'true');

    await page.keyboard.press('ArrowLeft');
    await page.waitForSelector(`${row}[aria-expanded="false"]`);
    let gantt = await readGantt(page);
    let ids = gantt.rows.map((r) => r.id);
    assert.deepEqual(ids.filter((id) => children.includes(id)), [], 'the folded row\'s descendants are gone');
    assert.deepEqual(gantt.bars.filter((b) => children.includes(b.id)).map((b) => b.id), [], 'and so are their bars');
    const following = spans[k + children.length + 1];
    if (following) assert.equal(ids[ids.indexOf(spans[k].id) + 1], following.id, 'the next row is the one after its subtree');
    await waitSelected(page, spans[k].id);

    await page.keyboard.press('ArrowRight');
    await page.waitForSelector(`${row}[aria-expanded="true"]`);
    gantt = await readGantt(page);
    ids = gantt.rows.map((r) => r.id);
    const at = ids.indexOf(spans[k].id);
    const shown = ids.slice(at + 1, at + 1 + children.length);
    assert.ok(shown.length > 0, 'rows below the unfolded row');
    assert.deepEqual(shown, children.slice(0, shown.length), 'its descendants are back, in order');
    await waitSelected(page, spans[k].id);
    target.finish(record);
  });

  test(`${what}: search counts the spans whose name, label or attribute value matches`, { timeout: 60_000 }, async (t) => {
    const { attempt } = target;
    const record = await target.freshPage(t);
    const { page } = record;
    await load(page, target.base + target.pagePath);
    await waitGantt(page);
    // Terms with letters that are no hex digits, so that span ids cannot match by accident; only
    // those some label or name holds.
    const terms = SEARCH_TERMS.filter((term) => spansMatchingLabelOrName(attempt, term).length > 0);
    assert.ok(terms.length >= 2, `search terms: ${terms}`);
    for (const term of terms) {
      const expected = spansMatching(attempt, term);
      await page.fill('#find', term);
      // The search runs a moment after the last key, then the URL takes the text.
      await waitQuery(page, (q) => q.get('find') === term, `find=${term}`);
      const text = (await page.textContent('#find-count')).trim();
      assert.equal(text, `${expected.length} match${expected.length === 1 ? '' : 'es'}`, `#find-count for "${term}"`);
      // The rows on screen marked as matches are exactly the matching spans among them.
      const gantt = await readGantt(page);
      const marked = gantt.rows.filter((r) => r.classes.includes('match')).map((r) => r.id);
      assert.deepEqual(marked, gantt.rows.map((r) => r.id).filter((id) => expected.includes(id)), `rows marked for "${term}"`);
    }
    target.finish(record);
  });

  test(`${what}: the task list lists it; clicking its row opens its page`, { timeout: 60_000 }, async (t) => {
    const record = await target.freshPage(t);
    const { page } = record;
    const list = await getJson(target.base, '/api/v1/tasks?limit=50&offset=0');
    await load(page, `${target.base}/`);
    const hrefs = await page.$$eval('table#tasks tr[data-href]', (rows) => rows.map((r) => r.dataset.href));
    assert.deepEqual(hrefs, list.tasks.map((task) => task.href), 'one row per API task, in order');
    assert.ok(hrefs.includes(target.pagePath), `${target.pagePath} is listed`);

    await page.click(`table#tasks tr[data-href="${target.pagePath}"] td.col-wall`);
    await page.waitForURL((url) => url.pathname + url.search === target.pagePath);
    await page.waitForSelector('#breakdown');
    await waitReady(page);
    assert.equal(currentPath(page), target.pagePath);
    assertBreakdownMatches(await readBreakdown(page), target.attempt);
    target.finish(record);
  });

  // The demo's rules file suppresses its task's slow-spark-jobs summary (cli/demo/rules.cc): the
  // page shows it last, muted, with its reason and expiry in words. Other targets have none.
  test(`${what}: suppressed findings come last, labelled with their reason and expiry`, { timeout: 60_000 }, async (t) => {
    const { findings } = target.attempt;
    const suppressed = findings.filter((f) => f.suppressed);
    if (target.airflowTask) assert.ok(suppressed.length > 0, 'the demo\'s attempt has a suppressed finding');
    const firstMuted = findings.findIndex((f) => f.suppressed);
    if (firstMuted >= 0) assert.ok(findings.slice(firstMuted).every((f) => f.suppressed), 'the API ranks them last');
    const record = await target.freshPage(t);
    const { page } = record;
    await load(page, target.base + target.pagePath);
    await page.waitForSelector('#findings');
    const shown = await page.$$eval('#findings li.finding', (items) => items.map((item) => ({
      key: item.dataset.findingKey,
      muted: item.classList.contains('suppressed'),
      text: item.textContent,
    })));
    assert.deepEqual(shown.map((f) => f.key), findings.map((f) => f.key), 'the page lists the API\'s findings in order');
    for (const [i, finding] of findings.entries()) {
      assert.equal(shown[i].muted, Boolean(finding.suppressed), `${finding.key} muted as the API says`);
      if (!finding.suppressed) continue;
      assert.ok(shown[i].text.includes(`Suppressed until ${finding.suppressed.until}: ${finding.suppressed.reason}`),
        `${finding.key} says why and until when: ${shown[i].text}`);
    }
    target.finish(record);
  });

  test(`${what}: a finding's recipe link opens the recipe and renders its heading`, { timeout: 60_000 }, async (t) => {
    const record = await target.freshPage(t);
    const { page } = record;
    await load(page, target.base + target.pagePath);
    const finding = target.attempt.findings.find((f) => f.recipe_href);
    assert.ok(finding, 'a finding with a recipe');
    const link = `#findings li.finding[data-finding-key="${finding.key}"] a.recipe-link`;
    assert.equal(await page.getAttribute(link, 'href'), finding.recipe_href);
    const markdown = await (await fetch(`${target.base}/api/v1${finding.recipe_href}`)).text();
    const heading = /^# (.+)$/m.exec(markdown)[1].replace(/[`*_]/g, '').trim();

    await page.click(link);
    await page.waitForURL((url) => url.pathname === finding.recipe_href);
    await page.waitForSelector('article.recipe h1');
    await waitReady(page);
    assert.equal((await page.textContent('article.recipe h1')).trim(), heading);

    // Back returns to the attempt page.
    await page.goBack();
    await page.waitForURL((url) => url.pathname + url.search === target.pagePath);
    await page.waitForSelector('#breakdown');
    target.finish(record);
  });

  test(`${what}: the pages work under their own CSP and report no violation`, { timeout: 60_000 }, async (t) => {
    const record = await target.freshPage(t);
    const recipe = target.attempt.findings.find((f) => f.recipe_href)?.recipe_href ?? '/recipes/README.md';
    for (const path of ['/', target.pagePath, recipe]) {
      const response = await load(record.page, target.base + path);
      const csp = response.headers()['content-security-policy'] ?? '';
      assert.match(csp, /default-src 'none'/, `${path}: served with a strict CSP`);
      assert.match(csp, /script-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, `${path}: no unsafe-* in the policy`);
    }
    assert.ok(await record.page.$('article.recipe h1'), 'the last page rendered');
    target.finish(record);
  });

  // Registered last: it reads the requests of every page the tests above opened.
  test(`${what}: no request leaves the page's origin`, () => {
    const all = target.records.flatMap((r) => r.requests);
    assertSameOrigin(all, target.base);
    assert.ok(all.some((url) => url.includes('/api/v1/')), 'the pages read the API');
  });
}
