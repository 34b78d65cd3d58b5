// The trace view in a real browser over the trace of a real Spark application: a Kubernetes job
// (NYC taxi data; 6 jobs, 4 executors, 69 s of resource wait) whose event log `sparktrace proxy`
// follows; the page is served by the proxy's admin port at /traces/<id>.
//
// The log comes from $SPARKTRACE_DATA_DIR (default <repo>/../shared/data), like the other tests
// that read real logs; without it these tests are skipped, and say so.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { REAL_LOG } from './harness.mjs';
import { attemptPageTests, setUpTarget } from './attempt_suite.mjs';

if (!fs.existsSync(REAL_LOG)) {
  test(`real-log trace (no event log at ${REAL_LOG}: set SPARKTRACE_DATA_DIR)`, { skip: `no event log ${REAL_LOG}` }, () => {});
} else {
  const target = setUpTarget(async (harness) => {
    const real = await harness.startRealLogProxy();
    return { base: real.base, pagePath: real.href, row: real.row };
  });

  test('the real trace has what the checks need', () => {
    const { attempt, row } = target;
    assert.equal(row.kind, 'trace');
    assert.match(target.pagePath, /^\/traces\/[0-9a-f]{32}$/);
    assert.equal(attempt.kind, 'trace');
    assert.equal(attempt.spans.filter((s) => s.lane === 'job').length, 6, 'six Spark jobs');
    assert.ok(attempt.executors.known);
    assert.equal(attempt.executors.max, 4, 'four executors');
    const wait = attempt.breakdown.phases.find((p) => p.phase === 'resource_wait').ms;
    assert.ok(wait > 60_000 && wait < 80_000, `about 69 s of resource wait (${wait} ms)`);
    assert.ok(attempt.critical_path.known && attempt.critical_path.span_ids.length > 0, 'a critical path from stage parents');
    assert.ok(attempt.findings.some((f) => f.recipe_href), 'a finding with a recipe');
  });

  attemptPageTests(target, 'real-log trace');
}
