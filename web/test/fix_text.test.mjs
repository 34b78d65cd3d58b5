import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitConfigTokens } from '../assets/fix_text.js';

test('config keys and values become code, the rest stays text', () => {
  const parts = splitConfigTokens('start with executors: spark.dynamicAllocation.initialExecutors=<executors the first job needs> and spark.dynamicAllocation.minExecutors=2 (now 0).');
  assert.deepEqual(parts, [
    { code: false, text: 'start with executors: ' },
    { code: true, text: 'spark.dynamicAllocation.initialExecutors=<executors the first job needs>' },
    { code: false, text: ' and ' },
    { code: true, text: 'spark.dynamicAllocation.minExecutors=2' },
    { code: false, text: ' (now 0).' },
  ]);
});

test('bare keys, backticks and trailing punctuation', () => {
  assert.deepEqual(splitConfigTokens('raise fs.s3a.multipart.size.'), [
    { code: false, text: 'raise ' }, { code: true, text: 'fs.s3a.multipart.size' }, { code: false, text: '.' }]);
  assert.deepEqual(splitConfigTokens('run `kubectl get pods`, then spark.executor.memory=8g; done'), [
    { code: false, text: 'run ' }, { code: true, text: 'kubectl get pods' }, { code: false, text: ', then ' },
    { code: true, text: 'spark.executor.memory=8g' }, { code: false, text: '; done' }]);
  assert.deepEqual(splitConfigTokens('nothing to see'), [{ code: false, text: 'nothing to see' }]);
  assert.deepEqual(splitConfigTokens('sparkling.wine=1'), [{ code: false, text: 'sparkling.wine=1' }]);
});
