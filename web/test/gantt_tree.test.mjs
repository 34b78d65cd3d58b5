import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildTree, visibleRows, ancestors, initialCollapsed, findMatches, nextMatch, hasChildren, searchText,
} from '../assets/gantt_tree.js';

function span(id, parent_id, depth, extra = {}) {
  return { id, parent_id, depth, name: 'spark.stage', label: id, attributes: {}, ...extra };
}

// op1 > (rpc1, job1 > (s1, s2)), op2 > job2 > s3
const SPANS = [
  span('op1', '', 0), span('rpc1', 'op1', 1), span('job1', 'op1', 1), span('s1', 'job1', 2),
  span('s2', 'job1', 2, { attributes: { 'spark.stage.id': 42, 'spark.job.tags': ['nightly', 'Orders'] } }),
  span('op2', '', 0), span('job2', 'op2', 1), span('s3', 'job2', 2, { status_message: 'FetchFailed here' }),
];

test('parents and subtree extents follow tree order', () => {
  const tree = buildTree(SPANS);
  assert.deepEqual(Array.from(tree.parent), [-1, 0, 0, 2, 2, -1, 5, 6]);
  assert.deepEqual(Array.from(tree.subtreeEnd), [5, 2, 5, 4, 5, 8, 8, 8]);
  assert.equal(hasChildren(tree, 2), true);
  assert.equal(hasChildren(tree, 1), false);
  assert.deepEqual(ancestors(tree, 4), [2, 0]);
});

test('a missing or later parent makes a root', () => {
  const tree = buildTree([span('a', 'ghost', 0), span('b', 'c', 1), span('c', '', 0)]);
  assert.deepEqual(Array.from(tree.parent), [-1, -1, -1]);
});

test('collapsing hides descendants, and only them', () => {
  const tree = buildTree(SPANS);
  assert.deepEqual(Array.from(visibleRows(tree, new Set())), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(Array.from(visibleRows(tree, new Set(['job1']))), [0, 1, 2, 5, 6, 7]);
  assert.deepEqual(Array.from(visibleRows(tree, new Set(['op1', 'job1']))), [0, 5, 6, 7]);
  assert.deepEqual(Array.from(visibleRows(tree, new Set(['op2']))), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(Array.from(visibleRows(tree, new Set(['s1']))), [0, 1, 2, 3, 4, 5, 6, 7], 'a leaf has nothing to hide');
});

test('search looks in labels, names and attribute values', () => {
  const cache = [];
  assert.deepEqual(findMatches(SPANS, 'orders', cache), [4]);
  assert.deepEqual(findMatches(SPANS, ' 42 ', cache), [4]);
  assert.deepEqual(findMatches(SPANS, 'fetchfailed', cache), [], 'not the status message');
  assert.deepEqual(findMatches(SPANS, 'op1', cache), [0], 'the label, not the parent id of its children');
  assert.deepEqual(findMatches(SPANS, 'JOB', cache), [2, 6]);
  assert.deepEqual(findMatches(SPANS, 'spark.stage', cache).length, 8);
  assert.deepEqual(findMatches(SPANS, '   ', cache), []);
  assert.equal(cache.length, 8);
  assert.ok(!searchText(SPANS[4]).includes('spark.job.tags'), 'keys are not searched, values are');
});

test('n / N step through matches and wrap', () => {
  const matches = [2, 6, 9];
  assert.equal(nextMatch(matches, -1), 2);
  assert.equal(nextMatch(matches, 2), 6);
  assert.equal(nextMatch(matches, 9), 2);
  assert.equal(nextMatch(matches, 2, true), 9);
  assert.equal(nextMatch(matches, 7, true), 6);
  assert.equal(nextMatch([], 3), -1);
});

// 200 operations x (1 job x 100 stages): about 20,000 spans.
function largeSpans() {
  const spans = [];
  for (let o = 0; o < 200; o += 1) {
    spans.push(span(`op${o}`, '', 0));
    spans.push(span(`job${o}`, `op${o}`, 1));
    for (let s = 0; s < 98; s += 1) spans.push(span(`s${o}.${s}`, `job${o}`, 2, { label: `stage ${s} of job ${o}` }));
  }
  return spans;
}

test('20,000 spans: build, collapse and search stay linear and quick', () => {
  const spans = largeSpans();
  assert.equal(spans.length, 20000);
  const t0 = performance.now();
  const tree = buildTree(spans);
  const collapsed = initialCollapsed(tree);
  const rows = visibleRows(tree, collapsed);
  const elapsed = performance.now() - t0;
  assert.equal(collapsed.size, 200, 'jobs start closed');
  assert.equal(rows.length, 400, 'operations and their jobs');
  assert.equal(visibleRows(tree, new Set()).length, 20000);
  collapsed.delete('job7');
  assert.equal(visibleRows(tree, collapsed).length, 498);
  assert.ok(elapsed < 200, `took ${elapsed} ms`);
  const cache = [];
  assert.equal(findMatches(spans, 'stage 97 of', cache).length, 200);
  assert.equal(findMatches(spans, 'of job 199', cache).length, 98);
  assert.equal(initialCollapsed(buildTree(SPANS)).size, 0, 'small traces open fully');
});
