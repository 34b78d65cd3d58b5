// Text for figures the API gives: durations (ms), byte counts, counts, epoch-ms times, shares.
// Pure functions, no DOM. Times are shown in UTC, as Airflow run ids and logical dates are.

const DASH = '\u2014';
const MINUS = '\u2212';

function isNumber(value) {
  return typeof value === 'number' && Number.isFinite(value);
}

// "950 ms", "4.2 s", "42 s", "2 min 30 s", "41 min", "2h 15m", "3d 4h".
export function formatDuration(ms) {
  if (!isNumber(ms)) return DASH;
  if (ms < 0) return MINUS + formatDuration(-ms);
  if (ms === 0) return '0 ms';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 999.5) return `${Math.round(ms)} ms`;
  if (ms < 9950) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 600) {
    const m = Math.floor(seconds / 60);
    const s = seconds % 60;
    return s === 0 ? `${m} min` : `${m} min ${s} s`;
  }
  const minutes = Math.round(ms / 60000);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h ${m}m`;
  }
  const days = Math.floor(hours / 24);
  const h = hours % 24;
  return h === 0 ? `${days}d` : `${days}d ${h}h`;
}

// A signed difference: "+41 min", "−3.2 s", "±0 ms".
export function formatDelta(ms) {
  if (!isNumber(ms)) return DASH;
  if (ms === 0) return '\u00b10 ms';
  return ms > 0 ? `+${formatDuration(ms)}` : formatDuration(ms);
}

// Offset from the attempt's start, as in the detail panel: "+12.3 s".
export function formatOffset(ms) {
  if (!isNumber(ms)) return DASH;
  return ms < 0 ? formatDuration(ms) : `+${formatDuration(ms)}`;
}

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

// IEC units: "512 B", "1.5 GiB", "256 MiB".
export function formatBytes(bytes) {
  if (!isNumber(bytes)) return DASH;
  if (bytes < 0) return MINUS + formatBytes(-bytes);
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${Math.round(value)} B`;
  // 1023.96 KiB would print "1024.0 KiB": move up a unit instead.
  if (value >= 1023.95 && unit < BYTE_UNITS.length - 1) return `1.0 ${BYTE_UNITS[unit + 1]}`;
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${BYTE_UNITS[unit]}`;
}

// "12,345"; fractions keep up to two decimals.
export function formatCount(value) {
  if (!isNumber(value)) return DASH;
  const rounded = Math.round(value * 100) / 100;
  return rounded.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

// A share 0..1: "42%", "3.5%", "0.4%", "<0.1%".
export function formatPercent(fraction) {
  if (!isNumber(fraction)) return DASH;
  const percent = fraction * 100;
  if (percent === 0) return '0%';
  if (Math.abs(percent) < 0.1) return percent > 0 ? '<0.1%' : `>${MINUS}0.1%`;
  if (Math.abs(percent) < 10) return `${(Math.round(percent * 10) / 10).toString().replace('-', MINUS)}%`;
  return `${Math.round(percent).toString().replace('-', MINUS)}%`;
}

function pad(value, width = 2) {
  return String(value).padStart(width, '0');
}

// "2026-11-25 06:00:12 UTC".
export function formatTimeUtc(epochMs) {
  if (!isNumber(epochMs)) return DASH;
  const d = new Date(epochMs);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} UTC`;
}

// "06:00:12.345" (UTC): the clock time of an event within an attempt.
export function formatClockUtc(epochMs, withMillis = false) {
  if (!isNumber(epochMs)) return DASH;
  const d = new Date(epochMs);
  const base = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return withMillis ? `${base}.${pad(d.getUTCMilliseconds(), 3)}` : base;
}

// "11-25 06:00": short start times for dense tables and chart labels.
export function formatShortUtc(epochMs) {
  if (!isNumber(epochMs)) return DASH;
  const d = new Date(epochMs);
  return `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

// A time-axis label for a tick at `ms` (since the attempt's start) on a grid of `stepMs`: precise
// enough that neighbouring ticks never print the same text.
export function formatTick(ms, stepMs) {
  if (!isNumber(ms)) return DASH;
  if (ms === 0) return '0';
  if (stepMs < 1) return `${ms.toFixed(3).replace(/\.?0+$/, '')} ms`;
  if (stepMs < 1000) {
    if (ms < 1000) return `${Math.round(ms)} ms`;
    const decimals = stepMs < 10 ? 3 : stepMs < 100 ? 2 : 1;
    return `${(ms / 1000).toFixed(decimals).replace(/\.?0+$/, '')} s`;
  }
  if (stepMs < 60000) {
    const seconds = Math.round(ms / 1000);
    if (seconds < 60) return `${seconds} s`;
    const m = Math.floor(seconds / 60);
    const s = seconds % 60;
    return s === 0 ? `${m} min` : `${m}:${pad(s)}`;
  }
  const minutes = Math.round(ms / 60000);
  if (minutes < 60) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m === 0 ? `${h}h` : `${h}h ${pad(m)}m`;
}

// A datetime-local input value ("2026-11-25T06:00") read as UTC, to epoch ms; null when empty/bad.
export function parseUtcInput(value) {
  if (typeof value !== 'string' || value === '') return null;
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!match) return null;
  const [, y, mo, d, h, mi, s] = match;
  const ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, s ? +s : 0);
  return Number.isFinite(ms) ? ms : null;
}

// Epoch ms to a datetime-local input value in UTC ("2026-11-25T06:00").
export function toUtcInput(epochMs) {
  if (!isNumber(epochMs)) return '';
  const d = new Date(epochMs);
  const base = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  return d.getUTCSeconds() ? `${base}:${pad(d.getUTCSeconds())}` : base;
}
