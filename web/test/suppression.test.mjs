import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findingsCountText, isSuppressed, suppressionText } from '../assets/suppression.js';

const open = { id: 'data-skew', suppressed: null };
const muted = { id: 'resource-wait-long', suppressed: { reason: 'capacity request open, INFRA-9', until: '2026-12-31' } };

test('a suppressed finding says so in words, with its reason and expiry', () => {
  assert.equal(isSuppressed(muted), true);
  assert.equal(suppressionText(muted), 'Suppressed until 2026-12-31: capacity request open, INFRA-9');
});

test('a finding without suppression (null, or absent in older answers) has no such text', () => {
  assert.equal(isSuppressed(open), false);
  assert.equal(isSuppressed({ id: 'x' }), false);
  assert.equal(suppressionText(open), '');
});

test('the count names the suppressed findings', () => {
  assert.equal(findingsCountText([]), 'no findings');
  assert.equal(findingsCountText([open]), '1 finding, largest impact first');
  assert.equal(findingsCountText([open, muted]), '2 findings, largest impact first (1 suppressed, listed last)');
});

test('the contract wants suppressed findings last, each with a reason and an expiry', async () => {
  const { readFileSync } = await import('node:fs');
  const { checkAttempt } = await import('./contract.mjs');
  const attempt = JSON.parse(readFileSync(new URL('fixtures/attempt.json', import.meta.url), 'utf8'));
  const first = attempt.findings[0];
  first.suppressed = { reason: 'known', until: '2026-12-31' };
  assert.ok(checkAttempt(attempt).includes('suppressed findings not last'));
  attempt.findings.push(attempt.findings.shift());
  assert.deepEqual(checkAttempt(attempt), []);
  first.suppressed = { reason: 'known' };
  assert.ok(checkAttempt(attempt).some((problem) => problem.endsWith('suppressed')));
});
