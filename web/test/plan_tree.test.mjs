import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildPlanModel, hottestPath, hottestNode, initialOpen, openAll, visiblePlanRows, findPlanNodes, openTo, stageSpanIds,
} from '../assets/plan_tree.js';

function node(id, name, time_ms, children = [], extra = {}) {
  return { id, name, detail: `${name} detail`, codegen_stage: null, stage_ids: [], time_ms, rows: null, spill_bytes: null, children, ...extra };
}

// 0 Join > (1 Sort > 2 Scan a [hot], 3 Sort > 4 Scan b)
const DOC = {
  nodes: 5, operator_time_ms: 200,
  root: node(0, 'SortMergeJoin', 20, [
    node(1, 'Sort', 10, [node(2, 'Scan parquet a', 150, [], { rows: 1000, stage_ids: [4] })]),
    node(3, 'Sort', 15, [node(4, 'Scan parquet b', 5)]),
  ]),
};

test('flattens in pre-order with parents, depths, subtree ends and shares', () => {
  const model = buildPlanModel(DOC);
  assert.deepEqual(model.nodes.map((n) => n.name), ['SortMergeJoin', 'Sort', 'Scan parquet a', 'Sort', 'Scan parquet b']);
  assert.deepEqual(model.nodes.map((n) => n.parent), [-1, 0, 1, 0, 3]);
  assert.deepEqual(model.nodes.map((n) => n.depth), [0, 1, 2, 1, 2]);
  assert.deepEqual(model.nodes.map((n) => n.subtreeEnd), [5, 3, 3, 5, 5]);
  assert.equal(model.nodes[2].share, 150 / 200);
  assert.equal(model.nodes[0].subtreeMs, 200);
  assert.equal(model.nodes[2].rows, 1000);
});

test('without operator_time_ms the shares are of the summed node times', () => {
  const model = buildPlanModel({ root: node(0, 'A', 30, [node(1, 'B', 10)]) });
  assert.equal(model.totalMs, 40);
  assert.equal(model.nodes[0].share, 0.75);
});

test('the hottest path follows the child whose subtree spent the most', () => {
  const model = buildPlanModel(DOC);
  assert.deepEqual([...hottestPath(model)], [0, 1, 2]);
  assert.equal(hottestNode(model), 2);
  // A subtree with no time at all ends the path.
  const cold = buildPlanModel({ root: node(0, 'A', 5, [node(1, 'B', 0)]) });
  assert.deepEqual([...cold.hotPath], [0]);
});

test('small plans open whole; large ones folded below the hottest path, down to the hottest node', () => {
  const model = buildPlanModel(DOC);
  assert.deepEqual(visiblePlanRows(model, initialOpen(model)), [0, 1, 2, 3, 4]);
  const folded = initialOpen(model, 0);
  assert.deepEqual([...folded].sort(), [0, 1]);
  assert.deepEqual(visiblePlanRows(model, folded), [0, 1, 2, 3]);  // Scan b stays folded under Sort
  assert.deepEqual(visiblePlanRows(model, new Set()), [0]);
  assert.deepEqual(visiblePlanRows(model, openAll(model)), [0, 1, 2, 3, 4]);
});

test('search finds by name or detail and unfolds only the ancestors', () => {
  const model = buildPlanModel(DOC);
  assert.deepEqual(findPlanNodes(model, 'scan PARQUET'), [2, 4]);
  assert.deepEqual(findPlanNodes(model, '  '), []);
  assert.deepEqual(findPlanNodes(model, 'nothing'), []);
  const open = openTo(model, new Set(), 4);
  assert.deepEqual([...open].sort(), [0, 3]);
  assert.deepEqual(visiblePlanRows(model, open), [0, 1, 3, 4]);
});

test('a 2,000-operator chain builds, folds and finds without recursion', () => {
  let root = node(1999, 'Scan deep', 1);
  for (let i = 1998; i >= 0; i -= 1) root = node(i, i % 2 ? 'Project' : 'Filter', i === 1000 ? 500 : 1, [root]);
  const model = buildPlanModel({ nodes: 2000, root });
  assert.equal(model.nodes.length, 2000);
  assert.equal(hottestNode(model), 1000);
  const open = initialOpen(model);
  assert.ok(visiblePlanRows(model, open).includes(1000));
  assert.deepEqual(findPlanNodes(model, 'scan deep'), [1999]);
  assert.equal(visiblePlanRows(model, openTo(model, new Set(), 1999)).length, 2000);
});

test('a node links to the stage spans of its stages within its operation', () => {
  const spans = [
    { id: 'op1', parent_id: '', lane: 'operation', attributes: {} },
    { id: 'job1', parent_id: 'op1', lane: 'job', attributes: {} },
    { id: 's4', parent_id: 'job1', lane: 'stage', attributes: { 'spark.stage.id': 4 } },
    { id: 's5', parent_id: 'job1', lane: 'stage', attributes: { 'spark.stage.id': 5 } },
    { id: 'op2', parent_id: '', lane: 'operation', attributes: {} },
    { id: 'job2', parent_id: 'op2', lane: 'job', attributes: {} },
    { id: 's4b', parent_id: 'job2', lane: 'stage', attributes: { 'spark.stage.id': '4' } },
  ];
  assert.deepEqual(stageSpanIds(spans, [4], 'op1'), ['s4']);
  assert.deepEqual(stageSpanIds(spans, [4], ''), ['s4', 's4b']);
  assert.deepEqual(stageSpanIds(spans, [], 'op1'), []);
});
