import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  makeScale, clampWindow, zoomWindow, panWindow, barExtent, niceTicks, visibleRowRange,
  scrollTopToShow, stepPath, minWindowMs, isFullWindow,
} from '../assets/gantt_layout.js';

test('time maps linearly onto the window', () => {
  const scale = makeScale(1000, 3000, 800);
  assert.equal(scale.x(1000), 0);
  assert.equal(scale.x(3000), 800);
  assert.equal(scale.x(2000), 400);
  assert.equal(scale.t(200), 1500);
  assert.equal(scale.pxPerMs, 0.4);
});

test('zooming keeps the anchor still and stays inside the attempt', () => {
  const total = 8_100_000;
  const win = { from: 0, to: total };
  const zoomed = zoomWindow(win, 4, 2_000_000, total);
  assert.equal(zoomed.to - zoomed.from, total / 4);
  const before = makeScale(win.from, win.to, 1000).x(2_000_000);
  const after = makeScale(zoomed.from, zoomed.to, 1000).x(2_000_000);
  assert.ok(Math.abs(before - after) < 1e-6);
  const out = zoomWindow(zoomed, 0.01, 0, total);
  assert.deepEqual(out, { from: 0, to: total });
  assert.ok(isFullWindow(out, total));
  const deep = zoomWindow(win, 1e12, 100, total);
  assert.ok(Math.abs(deep.to - deep.from - minWindowMs(total)) < 1e-9);
});

test('panning stops at the edges and keeps the width', () => {
  const total = 1000;
  assert.deepEqual(panWindow({ from: 100, to: 300 }, 50, total), { from: 150, to: 350 });
  assert.deepEqual(panWindow({ from: 100, to: 300 }, -500, total), { from: 0, to: 200 });
  assert.deepEqual(panWindow({ from: 100, to: 300 }, 5000, total), { from: 800, to: 1000 });
  assert.deepEqual(clampWindow(-50, 2000, total), { from: 0, to: 1000 });
});

test('bars are clipped to the window and never vanish', () => {
  const scale = makeScale(100, 200, 1000);
  assert.equal(barExtent(0, 50, scale), null);
  assert.equal(barExtent(250, 300, scale), null);
  assert.deepEqual(barExtent(150, 160, scale), { x: 500, width: 100, clippedLeft: false, clippedRight: false });
  assert.deepEqual(barExtent(50, 300, scale), { x: 0, width: 1000, clippedLeft: true, clippedRight: true });
  assert.equal(barExtent(150, 150.0001, scale).width, 1);
});

test('ticks fall on round steps inside the window', () => {
  const { step, ticks } = niceTicks(0, 8_100_000, 8);
  assert.equal(step, 1_800_000);
  assert.deepEqual(ticks, [0, 1_800_000, 3_600_000, 5_400_000, 7_200_000]);
  const small = niceTicks(1234, 1290, 6);
  assert.equal(small.step, 10);
  assert.deepEqual(small.ticks, [1240, 1250, 1260, 1270, 1280, 1290]);
  const tiny = niceTicks(0.1, 0.4, 3);
  assert.equal(tiny.step, 0.1);
  assert.deepEqual(tiny.ticks, [0.1, 0.2, 0.3, 0.4]);
  assert.deepEqual(niceTicks(5, 5).ticks, []);
});

test('only the rows on screen (plus overscan) are drawn, even for 20,000 rows', () => {
  const rows = 20000;
  const rowHeight = 22;
  assert.deepEqual(visibleRowRange(0, 440, rowHeight, rows, 0), { first: 0, last: 20 });
  assert.deepEqual(visibleRowRange(0, 440, rowHeight, rows, 6), { first: 0, last: 26 });
  const mid = visibleRowRange(10000 * rowHeight + 11, 440, rowHeight, rows, 6);
  assert.deepEqual(mid, { first: 9994, last: 10027 });
  assert.ok(mid.last - mid.first < 40);
  const end = visibleRowRange(rows * rowHeight, 440, rowHeight, rows, 6);
  assert.equal(end.last, rows);
  assert.ok(end.first <= end.last);
  assert.deepEqual(visibleRowRange(0, 440, rowHeight, 0), { first: 0, last: 0 });
});

test('scrolling to a row moves only as far as needed', () => {
  assert.equal(scrollTopToShow(5, 0, 220, 22), 0);
  assert.equal(scrollTopToShow(20, 0, 220, 22), 21 * 22 - 220);
  assert.equal(scrollTopToShow(2, 200, 220, 22), 44);
});

test('the executor count becomes a step path clipped to the window', () => {
  const start = 1_000_000;
  const series = [{ t_ms: start, count: 0 }, { t_ms: start + 100, count: 2 }, { t_ms: start + 300, count: 4 }];
  const scale = makeScale(0, 400, 400);
  assert.equal(stepPath(series, start, 400, scale, 42, 4), 'M0,42H100V22H300V2H400');
  const zoomed = makeScale(150, 250, 100);
  assert.equal(stepPath(series, start, 400, zoomed, 42, 4), 'M0,22H100');
  assert.equal(stepPath([], start, 400, scale, 42, 4), '');
});
