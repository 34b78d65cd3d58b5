import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatDuration, formatDelta, formatBytes, formatCount, formatPercent, formatTimeUtc,
  formatClockUtc, formatTick, parseUtcInput, toUtcInput, formatOffset,
} from '../assets/format.js';

test('durations read like a person would say them', () => {
  assert.equal(formatDuration(0), '0 ms');
  assert.equal(formatDuration(0.42), '0.42 ms');
  assert.equal(formatDuration(950), '950 ms');
  assert.equal(formatDuration(999.4), '999 ms');
  assert.equal(formatDuration(999.6), '1.0 s');
  assert.equal(formatDuration(4200), '4.2 s');
  assert.equal(formatDuration(42000), '42 s');
  assert.equal(formatDuration(59600), '1 min');
  assert.equal(formatDuration(150000), '2 min 30 s');
  assert.equal(formatDuration(41 * 60000 + 10000), '41 min');
  assert.equal(formatDuration(59.7 * 60000), '1h');
  assert.equal(formatDuration((2 * 60 + 15) * 60000), '2h 15m');
  assert.equal(formatDuration(76 * 3600000), '3d 4h');
  assert.equal(formatDuration(-4200), '\u22124.2 s');
  assert.equal(formatDuration(NaN), '\u2014');
  assert.equal(formatDuration(null), '\u2014');
});

test('deltas and offsets carry a sign', () => {
  assert.equal(formatDelta(41 * 60000), '+41 min');
  assert.equal(formatDelta(-3200), '\u22123.2 s');
  assert.equal(formatDelta(0), '\u00b10 ms');
  assert.equal(formatOffset(12300), '+12 s');
});

test('bytes use IEC units', () => {
  assert.equal(formatBytes(512), '512 B');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(256 * 1024 * 1024), '256 MiB');
  assert.equal(formatBytes(1.5 * 1024 ** 3), '1.5 GiB');
  assert.equal(formatBytes(1024 * 1024 - 1), '1.0 MiB');
  assert.equal(formatBytes(undefined), '\u2014');
});

test('counts and percents', () => {
  assert.equal(formatCount(1234567), '1,234,567');
  assert.equal(formatCount(2.345), '2.35');
  assert.equal(formatPercent(0.4237), '42%');
  assert.equal(formatPercent(0.035), '3.5%');
  assert.equal(formatPercent(0.0004), '<0.1%');
  assert.equal(formatPercent(0), '0%');
});

test('times are UTC', () => {
  const t = Date.UTC(2026, 10, 25, 6, 0, 12, 345);
  assert.equal(formatTimeUtc(t), '2026-11-25 06:00:12 UTC');
  assert.equal(formatClockUtc(t), '06:00:12');
  assert.equal(formatClockUtc(t, true), '06:00:12.345');
});

test('axis ticks are distinct at their step', () => {
  assert.equal(formatTick(0, 1000), '0');
  assert.equal(formatTick(250, 50), '250 ms');
  assert.equal(formatTick(1250, 50), '1.25 s');
  assert.equal(formatTick(1200, 200), '1.2 s');
  assert.equal(formatTick(45000, 5000), '45 s');
  assert.equal(formatTick(90000, 15000), '1:30');
  assert.equal(formatTick(600000, 300000), '10 min');
  assert.equal(formatTick(5400000, 900000), '1h 30m');
  assert.equal(formatTick(7200000, 3600000), '2h');
  const labels = [0, 1, 2, 3, 4].map((i) => formatTick(i * 15000, 15000));
  assert.equal(new Set(labels).size, labels.length);
});

test('datetime-local values are read and written as UTC', () => {
  const t = Date.UTC(2026, 10, 25, 6, 0);
  assert.equal(parseUtcInput('2026-11-25T06:00'), t);
  assert.equal(toUtcInput(t), '2026-11-25T06:00');
  assert.equal(parseUtcInput(toUtcInput(t + 7000)), t + 7000);
  assert.equal(parseUtcInput(''), null);
  assert.equal(parseUtcInput('yesterday'), null);
});
