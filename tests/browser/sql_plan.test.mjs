// The trace view's SQL operator tree in a real browser, over the trace of Apache Spark's own test log
// app-20200706201101-0003 (one SQL execution: a broadcast hash join, its metrics and driver-side
// updates) that `sparktrace proxy` follows. One page load: the tree is shown, the hottest operator's
// figures are those `sparktrace diagnose --json` gives for that node, folding and unfolding work, the
// search finds a folded node, and a node's stages are highlighted on the timeline.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import {
  BIN, Harness, JOIN_LOG, apiPathOf, artifactsDir, getJson, load, openPage,
} from './harness.mjs';
import { assertNoCspViolations, assertNoErrors } from './checks.mjs';

// An operator's time as docs/diagnose-sql.md defines it, from diagnose's metrics: its timing
// metrics' totals in ms (nsTiming converted), and its "number of output rows".
function diagnosedFacts(node) {
  let timeMs = 0;
  let rows = null;
  for (const metric of node.metrics) {
    if (metric.type === 'timing') timeMs += metric.total;
    if (metric.type === 'nsTiming') timeMs += metric.total / 1e6;
    if (metric.name === 'number of output rows') rows = metric.total;
  }
  return { id: node.id, name: node.name, timeMs, rows };
}

function flatten(node, out = []) {
  out.push(node);
  for (const child of node.children) flatten(child, out);
  return out;
}

if (!fs.existsSync(JOIN_LOG)) {
  test(`SQL operator tree (no event log at ${JOIN_LOG}: set SPARKTRACE_DATA_DIR)`, { skip: `no event log ${JOIN_LOG}` }, () => {});
} else {
  const harness = new Harness();
  const target = {};
  before(async () => {
    const real = await harness.startRealLogProxy(JOIN_LOG);
    target.base = real.base;
    target.pagePath = real.href;
    target.attempt = await getJson(real.base, apiPathOf(real.href));
    target.browser = await harness.launchBrowser();
  }, { timeout: 120_000 });
  after(() => harness.close(), { timeout: 60_000 });

  test('SQL operator tree: shown, hottest node as diagnose --json, folds, finds, highlights its stages', { timeout: 90_000 }, async (t) => {
    const { attempt } = target;
    assert.equal(attempt.sql_executions.length, 1, 'one SQL execution');
    const execution = attempt.sql_executions[0];
    assert.equal(execution.execution_id, 0);
    assert.ok(execution.plan_href, 'its plan is served');

    // The oracle: diagnose --json over the same log.
    const diagnosed = JSON.parse(execFileSync(BIN, ['diagnose', '--json', JOIN_LOG], { encoding: 'utf8', timeout: 60_000 }));
    const nodes = flatten(diagnosed.applications[0].sql_executions[0].plan).map(diagnosedFacts);
    const hottest = nodes.reduce((best, node) => (node.timeMs > best.timeMs ? node : best));
    assert.ok(hottest.timeMs > 0, 'diagnose gives the plan operator time');
    const join = nodes.find((node) => node.name === 'BroadcastHashJoin');
    assert.ok(join, 'the plan has its join');
    assert.equal(execution.top_operators[0].name, hottest.name, 'the hottest operator first in the summary');
    assert.equal(execution.top_operators[0].time_ms, hottest.timeMs);

    const record = await openPage(target.browser);
    t.after(() => record.context.close());
    const { page } = record;
    await load(page, target.base + target.pagePath);
    await page.click(`#sql-executions details[data-span-id="${execution.span_id}"] > summary`);
    await page.waitForSelector('.plan-row');
    const rowCount = () => page.locator('.plan-row').count();
    assert.equal(await rowCount(), nodes.length, 'a small plan opens whole');

    // The hottest node's figures, as diagnose gives them; on the hottest path.
    const hotRow = page.locator(`.plan-row[data-node-id="${hottest.id}"]`);
    assert.equal(Number(await hotRow.getAttribute('data-time-ms')), hottest.timeMs);
    assert.equal(await hotRow.getAttribute('data-hot'), 'true');
    assert.match(await hotRow.locator('.plan-share-text').textContent(), /%$/);
    const joinRow = page.locator(`.plan-row[data-node-id="${join.id}"]`);
    assert.equal(Number(await joinRow.getAttribute('data-rows')), join.rows, 'the join\'s output rows');
    await page.locator('#sql-executions').screenshot({ path: path.join(artifactsDir(), 'sql-plan-real-log.png') });

    // Folding the root leaves one row; unfolding brings them all back.
    await page.click('.plan-row[data-index="0"] .plan-toggle');
    await page.waitForFunction(() => document.querySelectorAll('.plan-row').length === 1);
    await page.click('.plan-unfold');
    await page.waitForFunction((n) => document.querySelectorAll('.plan-row').length === n, nodes.length);

    // The search unfolds down to what it finds, hidden under the folded root.
    await page.click('.plan-row[data-index="0"] .plan-toggle');
    await page.waitForFunction(() => document.querySelectorAll('.plan-row').length === 1);
    await page.fill('.plan-search', 'broadcastexchange');
    await page.press('.plan-search', 'Enter');
    const found = page.locator('.plan-row.selected');
    await found.waitFor();
    assert.equal(await found.locator('.plan-label').textContent(), 'BroadcastExchange');
    assert.ok(await rowCount() > 1, 'the folded root unfolded on the way to it');

    // Clicking the join highlights the stage spans it ran in.
    await page.click('.plan-unfold');
    const planDocument = await getJson(target.base, execution.plan_href);
    const stageIds = flatten(planDocument.plan.root).find((node) => node.id === join.id).stage_ids;
    assert.ok(stageIds.length > 0, 'the join ran in a stage');
    const stageSpans = attempt.spans.filter((s) => s.lane === 'stage' && stageIds.includes(s.attributes['spark.stage.id']));
    assert.ok(stageSpans.length > 0, 'its stages are spans of the trace');
    await joinRow.click();
    for (const span of stageSpans) {
      await page.waitForSelector(`#gantt [role=treeitem][data-row-id="${span.id}"].highlight`);
    }
    assertNoCspViolations(record);
    assertNoErrors(record);
  });
}
