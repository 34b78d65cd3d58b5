import { test } from 'node:test';
import assert from 'node:assert/strict';
import { phaseShares, segmentPixels, labelFits } from '../assets/breakdown_geometry.js';

const PHASES = [
  { phase: 'client', ms: 61234.5 }, { phase: 'resource_wait', ms: 2460000 }, { phase: 'compute', ms: 4100000.25 },
  { phase: 'io_write', ms: 1200000 }, { phase: 'idle', ms: 0 }, { phase: 'result_transfer', ms: 333 },
];

test('shares follow ms and add up to one', () => {
  const shares = phaseShares(PHASES);
  const total = PHASES.reduce((a, p) => a + p.ms, 0);
  assert.equal(shares.length, 6);
  assert.ok(Math.abs(shares.reduce((a, s) => a + s.share, 0) - 1) < 1e-12);
  shares.forEach((s, i) => assert.ok(Math.abs(s.share - PHASES[i].ms / total) < 1e-12));
  assert.equal(shares[4].share, 0);
  assert.equal(shares[1].start, shares[0].share);
});

test('pixel widths add up to the bar and stay within 1 px of exact', () => {
  for (const width of [0, 1, 7, 333, 640, 1199.5, 1366]) {
    const segments = segmentPixels(PHASES, width);
    const total = PHASES.reduce((a, p) => a + p.ms, 0);
    assert.equal(segments.reduce((a, s) => a + s.width, 0), Math.round(width), `width ${width}`);
    for (let i = 0; i < segments.length; i += 1) {
      assert.ok(Math.abs(segments[i].width - (PHASES[i].ms / total) * width) <= 1, `${segments[i].phase} at ${width}`);
      if (i > 0) assert.equal(segments[i].x, segments[i - 1].x + segments[i - 1].width);
    }
    assert.equal(segments[4].width, 0, 'a zero phase gets no pixel');
  }
});

test('an attempt with no time yet draws nothing', () => {
  const segments = segmentPixels(PHASES.map((p) => ({ ...p, ms: 0 })), 500);
  assert.deepEqual(segments.map((s) => s.width), [0, 0, 0, 0, 0, 0]);
  assert.ok(segments.every((s) => s.share === 0));
});

test('negative or missing ms count as zero', () => {
  const shares = phaseShares([{ phase: 'a', ms: -5 }, { phase: 'b', ms: undefined }, { phase: 'c', ms: 10 }]);
  assert.deepEqual(shares.map((s) => s.share), [0, 0, 1]);
});

test('labels are shown only where they fit', () => {
  assert.equal(labelFits(100, 6), true);
  assert.equal(labelFits(40, 6), false);
});
