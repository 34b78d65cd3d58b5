import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundSentence, densityBars } from '../assets/span_groups.js';

test('a density strip has a bar per non-empty slice, the fullest one full height', () => {
  const bars = densityBars([0, 4, 2, 0], 100, 20);
  assert.equal(bars.length, 2);
  assert.deepEqual(bars.map((bar) => [bar.x, bar.height, bar.count]), [[25, 20, 4], [50, 10, 2]]);
  assert.equal(bars[0].y, 0);
  assert.equal(bars[1].y, 10);
});

test('a single start still shows, and no starts draw nothing', () => {
  const bars = densityBars([1000, 1], 10, 20);
  assert.equal(bars[1].height, 1);
  assert.deepEqual(densityBars([0, 0], 10, 20), []);
  assert.deepEqual(densityBars(undefined, 10, 20), []);
});

test('the bound is told only when spans were summarised', () => {
  assert.equal(boundSentence(undefined), null);
  assert.equal(boundSentence({ max_spans: 20000, total: 10, listed: 10, summarised: 0 }), null);
  assert.equal(boundSentence({ max_spans: 20000, total: 48123, listed: 20000, summarised: 28123 }),
    'Listing 20,000 of 48,123 spans; 28,123 summarised below (--view-max-spans 20,000).');
});
