import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupAttributes, formatAttribute, taskDurationQuantiles } from '../assets/attribute_groups.js';

const STAGE = {
  'spark.stage.id': 12, 'spark.stage.attempt': 0, 'spark.stage.tasks': 400,
  'spark.stage.task_duration_ms.max': 412000, 'spark.stage.task_duration_ms.p50': 8200,
  'spark.stage.task_duration_ms.p95': 30100, 'spark.stage.jvm_gc_time_ms': 61000,
  'spark.stage.executor_run_time_ms': 5400000, 'spark.stage.memory_spilled_bytes': 3 * 1024 ** 3,
  'spark.stage.shuffle_read_bytes': 12 * 1024 ** 3, 'spark.stage.output_records': 1200000,
  'airflow.dag_id': 'etl', 'sparktrace.finding_ids': 'data-skew', 'spark.stage.parent_ids': ['10', '11'],
};

test('stage statistics are grouped in a fixed order', () => {
  const groups = groupAttributes(STAGE);
  assert.deepEqual(groups.map((g) => g.title),
    ['Tasks', 'Executor time', 'Shuffle', 'Spill and memory', 'Input and output', 'Stage', 'Airflow', 'Other']);
  assert.deepEqual(groups[0].rows.map((r) => r.label),
    ['tasks', 'task_duration_ms.p50', 'task_duration_ms.p95', 'task_duration_ms.max']);
  assert.deepEqual(groups[1].rows.map((r) => r.label), ['executor_run_time_ms', 'jvm_gc_time_ms']);
  assert.deepEqual(groups[5].rows.map((r) => r.label), ['attempt', 'id', 'parent_ids']);
  assert.equal(groups[7].rows[0].key, 'sparktrace.finding_ids');
});

test('values are formatted by what the key holds', () => {
  assert.deepEqual(formatAttribute('spark.stage.task_duration_ms.p95', 30100), { text: '30 s', raw: '30,100 ms' });
  assert.deepEqual(formatAttribute('spark.stage.memory_spilled_bytes', 3 * 1024 ** 3), { text: '3.0 GiB', raw: '3,221,225,472 B' });
  assert.deepEqual(formatAttribute('rpc.response.bytes', 1536), { text: '1.5 KiB', raw: '1,536 B' });
  assert.deepEqual(formatAttribute('spark.phase.resource_wait.ms', 1000), { text: '1.0 s', raw: '1,000 ms' });
  assert.deepEqual(formatAttribute('spark.stage.output_records', 1200000), { text: '1,200,000', raw: null });
  assert.deepEqual(formatAttribute('spark.stage.task_duration_ms.p50', 209), { text: '209 ms', raw: null }, 'no raw figure when nothing was rounded');
  assert.deepEqual(formatAttribute('spark.job.stage_ids', ['1', '2']), { text: '1, 2', raw: null });
  assert.deepEqual(formatAttribute('spark.connect.reattachable', true), { text: 'true', raw: null });
  assert.deepEqual(formatAttribute('x', '<b>'), { text: '<b>', raw: null });
});

test('task duration quantiles for the small chart', () => {
  assert.deepEqual(taskDurationQuantiles(STAGE), [{ label: 'p50', ms: 8200 }, { label: 'p95', ms: 30100 }, { label: 'max', ms: 412000 }]);
  assert.deepEqual(taskDurationQuantiles({}), []);
});
