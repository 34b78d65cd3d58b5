// Checks a JSON answer against docs/trace-view-api.md: the shapes and the promises the page relies
// on (six phases in order adding up to the wall time, intervals covering it, spans in tree order,
// ids that resolve, Airflow's task attempt consistent with the breakdown). Answers a list of problems, empty when it conforms. Usable on real server
// output too: node -e "import('./web/test/contract.mjs').then(m => console.log(m.checkAttempt(JSON.parse(require('fs').readFileSync(0)))))"

export const PHASES = ['client', 'resource_wait', 'compute', 'io_write', 'idle', 'result_transfer'];
export const LANES = ['task', 'rpc', 'operation', 'lifecycle', 'job', 'stage', 'phase', 'application', 'other'];
const STATES = ['running', 'success', 'failed'];
const SEVERITIES = ['info', 'warning', 'critical'];

const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const close = (a, b, tolerance = 1e-6) => Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(a), Math.abs(b));

export function checkAttempt(a) {
  const problems = [];
  const fail = (text) => problems.push(text);
  if (a.schema !== 'sparktrace.attempt/1') fail(`schema ${a.schema}`);
  if (!['airflow', 'trace'].includes(a.kind)) fail(`kind ${a.kind}`);
  if (a.kind === 'airflow') {
    for (const k of ['dag_id', 'task_id', 'run_id']) if (typeof a.identity?.[k] !== 'string') fail(`identity.${k}`);
    for (const k of ['try_number', 'map_index']) if (!Number.isInteger(a.identity?.[k])) fail(`identity.${k}`);
  }
  if (!STATES.includes(a.state)) fail(`state ${a.state}`);
  if (typeof a.in_progress !== 'boolean') fail('in_progress');
  if (!isNum(a.start_ms) || !isNum(a.end_ms) || !isNum(a.wall_ms)) fail('start/end/wall');
  if (!close(a.end_ms - a.start_ms, a.wall_ms)) fail('wall_ms != end - start');
  for (const t of a.tries ?? []) if (!Number.isInteger(t.try_number) || typeof t.href !== 'string') fail('tries[]');
  for (const key of ['previous_run', 'next_run']) {
    if (a[key] !== null && (typeof a[key]?.run_id !== 'string' || typeof a[key]?.href !== 'string')) fail(key);
  }

  checkAirflowTask(a, fail);
  checkCost(a, fail);
  checkWhatIf(a, fail);
  checkSqlExecutions(a, fail);
  checkSpanBound(a, fail);

  const b = a.breakdown;
  if (!b || !Array.isArray(b.phases)) {
    fail('breakdown');
  } else {
    if (b.phases.map((p) => p.phase).join() !== PHASES.join()) fail('breakdown.phases order');
    const sum = b.phases.reduce((s, p) => s + p.ms, 0);
    if (!close(sum, b.wall_ms, 1e-9) || !close(b.wall_ms, a.wall_ms)) fail(`phases add up to ${sum}, wall ${b.wall_ms}`);
    for (const p of b.phases) if (typeof p.label !== 'string' || !isNum(p.fraction) || p.ms < 0) fail(`phase ${p.phase}`);
    let t = a.start_ms;
    for (const i of b.intervals) {
      if (!PHASES.includes(i.phase)) fail(`interval phase ${i.phase}`);
      if (!close(i.start_ms, t, 1e-12)) fail(`interval gap at ${t}`);
      if (!(i.end_ms >= i.start_ms)) fail('interval reversed');
      t = i.end_ms;
    }
    if (b.intervals.length && !close(t, a.end_ms, 1e-12)) fail('intervals do not reach the end');
    const fromIntervals = Object.fromEntries(PHASES.map((p) => [p, 0]));
    for (const i of b.intervals) fromIntervals[i.phase] += i.end_ms - i.start_ms;
    for (const p of b.phases) if (!close(fromIntervals[p.phase], p.ms, 1e-6)) fail(`intervals of ${p.phase} != ms`);
  }

  const ids = new Map();
  a.spans.forEach((s, i) => ids.set(s.id, i));
  const childCount = new Map();
  a.spans.forEach((s, i) => {
    if (!LANES.includes(s.lane)) fail(`span ${s.id} lane ${s.lane}`);
    if (!(s.end_ms >= s.start_ms)) fail(`span ${s.id} reversed`);
    for (const k of ['name', 'label', 'status', 'status_message']) if (typeof s[k] !== 'string') fail(`span ${s.id} ${k}`);
    if (typeof s.open !== 'boolean' || typeof s.critical !== 'boolean' || typeof s.has_children !== 'boolean') fail(`span ${s.id} flags`);
    if (!Array.isArray(s.events) || !Array.isArray(s.finding_ids) || typeof s.attributes !== 'object') fail(`span ${s.id} lists`);
    if (!('spark_ui' in (s.links ?? {}))) fail(`span ${s.id} links`);
    if (s.progress !== undefined && s.progress !== null) {
      for (const k of ['stages_done', 'stages_total', 'tasks_done', 'tasks_total', 'input_bytes_read', 'inflight_tasks', 'updates']) {
        if (!Number.isInteger(s.progress[k]) || s.progress[k] < 0) fail(`span ${s.id} progress.${k}`);
      }
    }
    if (s.parent_id && ids.has(s.parent_id)) {
      const p = ids.get(s.parent_id);
      if (p >= i) fail(`span ${s.id} before its parent`);
      if (a.spans[p].depth + 1 !== s.depth) fail(`span ${s.id} depth`);
      childCount.set(s.parent_id, (childCount.get(s.parent_id) ?? 0) + 1);
    } else if (s.depth !== 0) {
      fail(`root span ${s.id} depth ${s.depth}`);
    }
  });
  for (const s of a.spans) if (s.has_children !== childCount.has(s.id)) fail(`span ${s.id} has_children`);

  const findingIds = new Set();
  let lastImpact = Infinity;
  let inSuppressed = false;  // suppressed findings (null or {reason, until}) come last, by impact too
  for (const f of a.findings) {
    findingIds.add(f.id);
    if (!SEVERITIES.includes(f.severity)) fail(`finding ${f.key} severity`);
    const suppressed = f.suppressed ?? null;
    if (suppressed !== null && (typeof suppressed.reason !== 'string' || typeof suppressed.until !== 'string')) fail(`finding ${f.key} suppressed`);
    if (inSuppressed && suppressed === null) fail('suppressed findings not last');
    if (suppressed !== null && !inSuppressed) [inSuppressed, lastImpact] = [true, Infinity];
    if (f.impact_seconds > lastImpact) fail('findings not by impact');
    lastImpact = f.impact_seconds;
    for (const k of ['evidence', 'fix', 'related', 'span_ids']) if (!Array.isArray(f[k])) fail(`finding ${f.key} ${k}`);
    for (const id of f.span_ids) if (!ids.has(id)) fail(`finding ${f.key} span ${id}`);
    if (!f.recipe_href?.startsWith('/recipes/')) fail(`finding ${f.key} recipe_href`);
  }
  for (const s of a.spans) for (const id of s.finding_ids) if (!findingIds.has(id)) fail(`span ${s.id} finding ${id}`);

  const ex = a.executors;
  if (typeof ex?.known !== 'boolean' || !isNum(ex.max) || !Array.isArray(ex.series)) fail('executors');
  for (let i = 1; i < (ex?.series?.length ?? 0); i += 1) if (ex.series[i].t_ms < ex.series[i - 1].t_ms) fail('executors.series order');

  const cp = a.critical_path;
  const critical = a.spans.filter((s) => s.critical).map((s) => s.id);
  if (cp.span_ids.slice().sort().join() !== critical.slice().sort().join()) fail('critical_path.span_ids != critical spans');
  for (const seg of cp.segments) if (!ids.has(seg.span_id) || !(seg.end_ms >= seg.start_ms)) fail('critical segment');
  if (!close(cp.ms, cp.segments.reduce((s, x) => s + x.end_ms - x.start_ms, 0))) fail('critical_path.ms');

  const h = a.history;
  if (!Array.isArray(h?.runs) || !Array.isArray(h?.comparison)) fail('history');
  for (const r of h?.runs ?? []) if (!r.phases || typeof r.href !== 'string' || typeof r.current !== 'boolean') fail('history.runs[]');
  if (h?.baseline) {
    if (!Number.isInteger(h.baseline.runs) || !isNum(h.baseline.median_wall_ms)) fail('baseline');
    for (const c of h.comparison) if (!close(c.delta_ms, c.current_ms - c.median_ms)) fail(`comparison ${c.phase}`);
  } else if (h && h.baseline !== null) {
    fail('baseline must be null when absent');
  }
  if (typeof a.downloads?.chrome_trace !== 'string' || typeof a.downloads?.otlp_json !== 'string') fail('downloads');
  return problems;
}

// `airflow_task`: null, or Airflow's task attempt with its figures consistent — the three parts of
// the time outside Spark add up to it, Spark's time is the rest of Airflow's wall time, the task lies
// within the attempt (its span is one of the attempt's roots, lane `task`), and the time outside
// Spark is the breakdown's `client` intervals within the task, split where Spark's time begins and
// ends (all of it before the first call when Spark never ran).
const OUTSIDE_PARTS = ['before_first_call_ms', 'between_calls_ms', 'after_last_call_ms'];
const MS_TOLERANCE = 1e-3;  // figures summed in another order may differ in the last bits of a double
const closeMs = (x, y) => Math.abs(x - y) <= MS_TOLERANCE * Math.max(1, Math.abs(x) / 1e6, Math.abs(y) / 1e6);

function checkAirflowTask(a, fail) {
  if (!('airflow_task' in a)) return fail('airflow_task missing (null when there is none)');
  const t = a.airflow_task;
  if (t === null) return;
  if (typeof t !== 'object' || Array.isArray(t)) return fail('airflow_task is neither null nor an object');
  if (typeof t.span_id !== 'string' || !/^[0-9a-f]{16}$/.test(t.span_id)) fail(`airflow_task.span_id ${t.span_id}`);
  if (typeof t.state !== 'string' || !/^[a-z_]+$/.test(t.state)) fail(`airflow_task.state ${t.state}`);
  for (const k of ['operator', 'hostname']) if (typeof t[k] !== 'string') fail(`airflow_task.${k}`);
  if (typeof t.running !== 'boolean') fail('airflow_task.running');
  else if (t.running !== (t.state === 'running')) fail(`airflow_task.running ${t.running} with state ${t.state}`);
  const o = t.outside_spark;
  const numbers = [t.start_ms, t.end_ms, t.wall_ms, t.spark_ms, ...[...OUTSIDE_PARTS, 'ms'].map((k) => o?.[k])];
  if (!numbers.every(isNum)) return fail('airflow_task: a figure is not a finite number');
  if (!closeMs(t.end_ms - t.start_ms, t.wall_ms)) fail('airflow_task.wall_ms != end_ms - start_ms');
  for (const k of [...OUTSIDE_PARTS, 'ms']) if (o[k] < 0) fail(`airflow_task.outside_spark.${k} < 0`);
  const parts = OUTSIDE_PARTS.reduce((sum, k) => sum + o[k], 0);
  if (!closeMs(parts, o.ms)) fail(`airflow_task.outside_spark parts add up to ${parts}, not ${o.ms}`);
  if (!closeMs(t.spark_ms, t.wall_ms - o.ms)) fail(`airflow_task.spark_ms ${t.spark_ms} != wall_ms - outside_spark.ms`);
  if (o.ms > t.wall_ms + MS_TOLERANCE) fail('airflow_task.outside_spark.ms > wall_ms');
  if (t.start_ms < a.start_ms - MS_TOLERANCE || t.end_ms > a.end_ms + MS_TOLERANCE) fail('airflow_task outside the attempt\'s range');
  const span = a.spans?.find((s) => s.id === t.span_id);
  if (!span) fail(`airflow_task.span_id ${t.span_id} is not a span of the attempt`);
  else if (span.lane !== 'task') fail(`airflow_task's span has lane ${span.lane}`);
  else if (span.depth !== 0) fail('airflow_task\'s span is not a root');

  // The time outside Spark: the breakdown's client intervals (nothing of Spark in flight) within
  // Airflow's start and end, split by the first and the last instant with Spark in flight.
  const b = a.breakdown;
  if (!Array.isArray(b?.phases) || !Array.isArray(b?.intervals)) return;
  const client = b.phases.find((p) => p.phase === 'client');
  if (client && o.ms > client.ms + MS_TOLERANCE) fail(`airflow_task.outside_spark.ms ${o.ms} > breakdown client ${client.ms}`);
  const spark = b.intervals.filter((i) => i.phase !== 'client');
  const first = spark.length ? spark[0].start_ms : Infinity;
  const last = spark.length ? spark[spark.length - 1].end_ms : Infinity;
  const split = { before_first_call_ms: 0, between_calls_ms: 0, after_last_call_ms: 0 };
  for (const i of b.intervals) {
    if (i.phase !== 'client') continue;
    const ms = Math.max(0, Math.min(i.end_ms, t.end_ms) - Math.max(i.start_ms, t.start_ms));
    const key = i.end_ms <= first ? 'before_first_call_ms' : i.start_ms >= last ? 'after_last_call_ms' : 'between_calls_ms';
    split[key] += ms;
  }
  for (const k of OUTSIDE_PARTS) if (!closeMs(split[k], o[k])) fail(`airflow_task.outside_spark.${k} ${o[k]} != breakdown's ${split[k]}`);
}

export function checkTasks(list) {
  const problems = [];
  if (list.schema !== 'sparktrace.tasks/2') problems.push('schema');
  if (!Number.isInteger(list.total) || !Number.isInteger(list.offset) || !Number.isInteger(list.limit)) problems.push('paging');
  if (list.tasks.length > list.limit) problems.push('more rows than limit');
  for (const t of list.tasks) {
    if (!['airflow', 'trace'].includes(t.kind)) problems.push(`kind ${t.kind}`);
    if (!STATES.includes(t.state)) problems.push(`state ${t.state}`);
    if (Object.keys(t.phases).sort().join() !== PHASES.slice().sort().join()) problems.push('phases keys');
    const sum = Object.values(t.phases).reduce((s, v) => s + v, 0);
    if (!close(sum, t.wall_ms, 1e-9)) problems.push(`row phases ${sum} != wall ${t.wall_ms}`);
    if (typeof t.href !== 'string' || !t.href.startsWith('/')) problems.push('href');
    if (!Array.isArray(t.trace_ids) || t.trace_ids.length > 20) problems.push('trace_ids: at most 20');
    if (typeof t.trace_ids_truncated !== 'boolean' || (t.trace_ids_truncated && t.trace_ids.length !== 20)) problems.push('trace_ids_truncated');
    if (t.top_finding !== null && !SEVERITIES.includes(t.top_finding.severity)) problems.push('top_finding');
  }
  return problems;
}

// `cost`: null, or the attempt's resource-seconds (docs/trace-view-api.md "Cost"), whose parts add up.
function checkCost(a, fail) {
  if (!('cost' in a)) return fail('cost missing (null when there is none)');
  const c = a.cost;
  if (c === null) return;
  for (const k of ['core_seconds', 'executor_core_seconds', 'driver_core_seconds', 'used_core_seconds', 'share']) {
    if (!isNum(c[k]) || c[k] < 0) fail(`cost.${k} ${c[k]}`);
  }
  if (!close(c.core_seconds, c.executor_core_seconds + c.driver_core_seconds)) fail('cost.core_seconds != executor + driver');
  if (c.gib_seconds !== null && !(isNum(c.gib_seconds) && c.gib_seconds >= 0)) fail(`cost.gib_seconds ${c.gib_seconds}`);
  if (c.idle_fraction !== null && !(isNum(c.idle_fraction) && c.idle_fraction >= 0 && c.idle_fraction <= 1)) fail(`cost.idle_fraction ${c.idle_fraction}`);
  if (typeof c.shared !== 'boolean' || !Number.isInteger(c.other_operations)) fail('cost.shared/other_operations');
  if (!(c.share > 0 && c.share <= 1)) fail(`cost.share ${c.share}`);
  if (typeof c.basis !== 'string' || !c.basis) fail('cost.basis');
  if (c.money !== null) {
    if (!['total', 'cores', 'memory'].every((k) => isNum(c.money?.[k]) && c.money[k] >= 0)) return fail('cost.money');
    if (!close(c.money.total, c.money.cores + c.money.memory, 1e-3)) fail('cost.money.total != cores + memory');
  }
}

// `what_if`: null, or estimates (docs/trace-view-api.md "What-if estimates") whose saving is the
// measured time less the estimate, each naming the findings it answers.
function checkWhatIf(a, fail) {
  if (!('what_if' in a)) return fail('what_if missing (null when there is none)');
  const w = a.what_if;
  if (w === null) return;
  if (!['ratio', 'difference', 'raw'].includes(w.anchoring)) fail(`what_if.anchoring ${w.anchoring}`);
  if (!Array.isArray(w.estimates) || w.estimates.length === 0) return fail('what_if.estimates');
  const names = new Set();
  for (const e of w.estimates) {
    if (typeof e.name !== 'string' || names.has(e.name)) fail(`what_if estimate name ${e.name}`);
    names.add(e.name);
    if (typeof e.label !== 'string' || !e.label.startsWith('with ')) fail(`what_if ${e.name} label`);
    for (const k of ['estimated_ms', 'measured_ms', 'slots']) if (!isNum(e[k]) || e[k] < 0) fail(`what_if ${e.name}.${k}`);
    if (!close(e.saving_ms, e.measured_ms - e.estimated_ms, 1e-6)) fail(`what_if ${e.name}: saving != measured - estimated`);
    if (e.executors !== null && !Number.isInteger(e.executors)) fail(`what_if ${e.name}.executors`);
    if (!Array.isArray(e.answers) || !e.answers.every((id) => typeof id === 'string')) fail(`what_if ${e.name}.answers`);
  }
}

// sql_executions: one summary per spark.sql.execution span, the plan never inlined (served by plan_href).
// Fixtures made before it existed have none.
function checkSqlExecutions(a, fail) {
  if (a.sql_executions === undefined) return;
  if (!Array.isArray(a.sql_executions)) { fail('sql_executions'); return; }
  const sqlSpans = new Set(a.spans.filter((s) => s.name === 'spark.sql.execution').map((s) => s.id));
  if (sqlSpans.size !== a.sql_executions.length) fail('sql_executions: one per spark.sql.execution span');
  for (const e of a.sql_executions) {
    if (!sqlSpans.has(e.span_id)) fail(`sql_executions: span ${e.span_id}`);
    if (e.plan_href !== null && !(typeof e.plan_href === 'string' && e.plan_href.startsWith('/api/v1/traces/'))) fail('sql_executions.plan_href');
    if (!Array.isArray(e.top_operators) || e.top_operators.length > 5) fail('sql_executions.top_operators');
    for (const o of e.top_operators ?? []) if (typeof o.name !== 'string' || !isNum(o.time_ms)) fail('sql_executions.top_operators[]');
  }
  for (const s of a.spans) if (s.attributes && 'spark.sql.plan' in s.attributes) fail(`span ${s.id} inlines its plan`);
}

// The list's bound (docs/trace-view-api.md, "Large attempts"): what is not listed is in span_groups.
function checkSpanBound(a, fail) {
  const bound = a.span_bound;
  if (bound === undefined) return;  // an answer of an earlier server
  for (const k of ['max_spans', 'total', 'listed', 'summarised']) if (!Number.isInteger(bound?.[k])) fail(`span_bound.${k}`);
  if (bound.listed !== (a.spans ?? []).length) fail('span_bound.listed != spans.length');
  if (bound.total !== bound.listed + bound.summarised) fail('span_bound.total != listed + summarised');
  if (!Array.isArray(a.span_groups)) { fail('span_groups'); return; }
  let summarised = 0;
  for (const g of a.span_groups) {
    if (!LANES.includes(g.lane) || typeof g.name !== 'string' || !Number.isInteger(g.count)) fail('span_groups[]');
    const starts = g.buckets?.starts ?? [];
    if (starts.reduce((x, y) => x + y, 0) !== g.count) fail('span_groups[].buckets.starts do not add up to count');
    summarised += g.count;
  }
  if (summarised !== bound.summarised) fail('span_groups counts != span_bound.summarised');
}
