// Groups a span's attributes for the detail panel (stage task statistics, time, shuffle, spill,
// I/O, job, phase, Spark Connect, RPC, Airflow, the rest) and formats each value by what its key
// says it holds (…_bytes, …_ms, counts). Pure: returns plain rows of text.

import { formatBytes, formatCount, formatDuration } from './format.js';

const STAGE = 'spark.stage.';

const GROUPS = [
  {
    title: 'Tasks', prefix: STAGE,
    keys: ['tasks', 'tasks_ended', 'failed_tasks', 'killed_tasks', 'task_duration_ms.p50',
      'task_duration_ms.p95', 'task_duration_ms.max', 'task_duration_exact'],
  },
  { title: 'Executor time', prefix: STAGE, keys: ['executor_run_time_ms', 'executor_cpu_time_ms', 'jvm_gc_time_ms'] },
  { title: 'Shuffle', prefix: STAGE, keys: ['shuffle_read_bytes', 'shuffle_fetch_wait_ms', 'shuffle_write_bytes'] },
  {
    title: 'Spill and memory', prefix: STAGE,
    keys: ['memory_spilled_bytes', 'disk_spilled_bytes', 'peak_execution_memory_bytes'],
  },
  { title: 'Input and output', prefix: STAGE, keys: ['input_bytes', 'input_records', 'output_bytes', 'output_records'] },
  { title: 'Stage', prefix: STAGE },
  { title: 'Job', prefix: 'spark.job.' },
  { title: 'Phase', prefix: 'spark.phase.' },
  { title: 'Application', prefix: 'spark.app.' },
  { title: 'Spark Connect', prefix: 'spark.connect.' },
  { title: 'RPC', prefix: 'rpc.', also: ['server.', 'network.'] },
  { title: 'Airflow', prefix: 'airflow.' },
];

function groupOf(key) {
  for (const group of GROUPS) {
    if (group.keys) {
      if (key.startsWith(group.prefix) && group.keys.includes(key.slice(group.prefix.length))) return group;
    } else if (key.startsWith(group.prefix) || group.also?.some((p) => key.startsWith(p))) {
      return group;
    }
  }
  return null;
}

function isDurationKey(key) {
  return /(_ms|\.ms)(\.(p\d+|max|min|avg))?$/.test(key) || /_ms$/.test(key);
}

function isBytesKey(key) {
  return /(_bytes|\.bytes)$/.test(key);
}

// The display text of one attribute value; `raw` is the exact value when the text rounds it.
export function formatAttribute(key, value) {
  if (Array.isArray(value)) return { text: value.map(String).join(', '), raw: null };
  if (typeof value === 'number') {
    // The exact figure beside the rounded one, where rounding changed it.
    const withRaw = (text, raw) => ({ text, raw: text === raw ? null : raw });
    if (isBytesKey(key)) return withRaw(formatBytes(value), `${formatCount(value)} B`);
    if (isDurationKey(key)) return withRaw(formatDuration(value), `${formatCount(value)} ms`);
    return { text: formatCount(value), raw: null };
  }
  if (typeof value === 'boolean') return { text: value ? 'true' : 'false', raw: null };
  if (value === null || value === undefined) return { text: '', raw: null };
  if (typeof value === 'object') return { text: JSON.stringify(value), raw: null };
  return { text: String(value), raw: null };
}

// [{title, prefix, rows:[{key, label, text, raw, value}]}] in a fixed order, empty groups left out;
// within a group, listed keys in their order, then the rest by name.
export function groupAttributes(attributes) {
  const buckets = new Map();
  const other = { title: 'Other', prefix: '', rows: [] };
  for (const key of Object.keys(attributes || {})) {
    const group = groupOf(key);
    const value = attributes[key];
    const { text, raw } = formatAttribute(key, value);
    const prefix = group && key.startsWith(group.prefix) ? group.prefix : '';
    const row = { key, label: key.slice(prefix.length), text, raw, value };
    if (!group) {
      other.rows.push(row);
      continue;
    }
    if (!buckets.has(group)) buckets.set(group, { title: group.title, prefix: group.prefix, rows: [] });
    buckets.get(group).rows.push(row);
  }
  const out = [];
  for (const group of GROUPS) {
    const bucket = buckets.get(group);
    if (!bucket) continue;
    const rank = (row) => {
      const at = group.keys ? group.keys.indexOf(row.label) : -1;
      return at < 0 ? Number.MAX_SAFE_INTEGER : at;
    };
    bucket.rows.sort((a, b) => rank(a) - rank(b) || a.key.localeCompare(b.key));
    out.push(bucket);
  }
  if (other.rows.length) {
    other.rows.sort((a, b) => a.key.localeCompare(b.key));
    out.push(other);
  }
  return out;
}

// The task-duration quantiles of a stage span, when it has them: [{label, ms}] for a small chart.
export function taskDurationQuantiles(attributes) {
  const out = [];
  for (const q of ['p50', 'p95', 'max']) {
    const value = attributes?.[`${STAGE}task_duration_ms.${q}`];
    if (typeof value === 'number' && Number.isFinite(value)) out.push({ label: q, ms: value });
  }
  return out;
}
