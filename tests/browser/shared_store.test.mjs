// The trace view in a real browser over the shared PostgreSQL store (docs/shared-store.md): the
// demo's proxy writes its Airflow task's trace to PostgreSQL 15 (Debian's, started for this test),
// and `sparktrace ui --store postgresql://…` serves it. The same page checks as over the SQLite file
// (attempt_suite.mjs), so the two backends show the same attempt the same way.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attemptPageTests, setUpTarget } from './attempt_suite.mjs';

const target = setUpTarget((harness) => harness.startDemo({ postgres: true }), { airflowTask: true });

test('the attempt is read from PostgreSQL, with everything the checks need', () => {
  assert.match(target.store, /^postgresql:\/\//);
  const { attempt } = target;
  assert.equal(attempt.kind, 'airflow');
  assert.ok(attempt.spans.length >= 20, `${attempt.spans.length} spans`);
  assert.ok(attempt.critical_path.span_ids.length > 0, 'a critical path');
  assert.ok(attempt.findings.some((f) => f.recipe_href), 'a finding with a recipe');
  const lanes = new Set(attempt.spans.map((s) => s.lane));
  for (const lane of ['task', 'rpc', 'operation', 'job', 'stage', 'phase']) assert.ok(lanes.has(lane), `a ${lane} span`);
  // Airflow's own task attempt, as the demo reports it: it succeeded, and its operator is known.
  assert.ok(attempt.airflow_task, `the attempt has airflow_task: ${JSON.stringify(attempt.airflow_task)}`);
  assert.equal(attempt.airflow_task.state, 'success');
  assert.ok(attempt.airflow_task.operator, 'an operator class');
});

attemptPageTests(target, 'demo attempt on PostgreSQL');
