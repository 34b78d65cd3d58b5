// The trace view's SQL operator tree at the scale, for bench/trace_view_browser_bench.mjs:
// a synthetic 2,000-operator plan (a Union of 100 twenty-operator joins and aggregates, every node
// with five metrics) on an attempt of one operation, served to the real page (the ui's assets) by
// Playwright routes for the two API answers it reads, so that no store has to hold it.
//
// Per run, in a fresh context: navigation -> body[data-ready] (page_ready_ms), opening the
// execution -> its plan rows drawn (open_ms: the plan's fetch, parse and first, folded draw),
// "Unfold all" -> 2,000 rows drawn and the next frame (unfold_all_ms), "Fold to hottest path" ->
// drawn and the next frame (fold_ms). Checks that the plan really came: 2,000 rows unfolded, the
// search finds the deepest scan and unfolds to it.

export const PLAN_NODES = 2000;
const TRACE = 'a1'.repeat(16);
const OPERATION = 'b1'.repeat(8);
const SQL_SPAN = 'c1'.repeat(8);
const START = 1_764_050_400_000;

function metricsOf(i) {
  const metric = (name, type, total) => ({ name, type, total, min: type === 'sum' ? null : 1, median: type === 'sum' ? null : 2, max: type === 'sum' ? null : 3 });
  return [metric('number of output rows', 'sum', 1000 + i), metric('time in aggregation build', 'timing', i % 97),
    metric('peak memory', 'size', 65536), metric('spill size', 'size', i % 13 ? 0 : 4096), metric('number of files read', 'sum', 3)];
}

// A Union of ~100 branches, each a 20-operator query (aggregate, exchange, project, filter, a
// sort-merge join of two sorted, exchanged scans), as large generated plans are: wide rather than
// deep. Pre-order ids; branch 57's first scan is the hottest operator.
export function syntheticPlan(nodes = PLAN_NODES) {
  let next = 0;
  const make = (name, detail, timeMs, branch, children = () => []) => {
    if (next >= nodes) return null;
    const node = { id: next, name, detail, codegen_stage: branch, stage_ids: [branch % 50], time_ms: timeMs,
      rows: 1000 + next, spill_bytes: next % 13 ? 0 : 4096, peak_memory_bytes: 65536, metrics: metricsOf(next), children: [] };
    next += 1;
    node.children = children().filter(Boolean);
    return node;
  };
  // A chain of [name, detail, ms] operators, the first on top, over what `below()` makes.
  const chain = (b, operators, below = () => []) => {
    const [name, detail, ms] = operators[0];
    return make(name, detail, ms, b, operators.length > 1 ? () => [chain(b, operators.slice(1), below)] : below);
  };
  const side = (b, t) => chain(b, [['WholeStageCodegen', '', 0], ['Sort', `Sort [k${b}]`, 3],
    ['Exchange', `Exchange hashpartitioning(k${b}, 200)`, 4], ['Project', `Project [k${b}, v]`, 1],
    [`Scan parquet t${b}_${t}`, `FileScan parquet t${b}_${t}[k,v]`, b === 57 && t === 0 ? 5000 : 20]]);
  const branch = (b) => chain(b, [['HashAggregate', `HashAggregate(keys=[k${b}])`, 5], ['Exchange', 'Exchange SinglePartition', 4],
    ['HashAggregate', `HashAggregate(keys=[k${b}], partial)`, 5], ['Project', `Project [k${b}]`, 1],
    ['Filter', `Filter isnotnull(k${b})`, 2], ['Project', `Project [k${b}, v]`, 1],
    ['SortMergeJoin', `SortMergeJoin [k${b}], [k${b}], Inner`, 30]], () => [side(b, 0), side(b, 1)]);
  const root = make('Union', 'Union', 1, 0, () => {
    const branches = [];
    for (let b = 0; next < nodes; b += 1) branches.push(branch(b));
    return branches;
  });
  const time = (n) => n.time_ms + n.children.reduce((sum, c) => sum + time(c), 0);
  return { nodes: next, dropped_by_parser: 0, metrics_dropped: false, operator_time_ms: time(root), root, nodes_written: next };
}

function span(id, parent, name, lane, label, attributes = {}) {
  return { id, parent_id: parent, trace_id: TRACE, depth: parent ? 1 : 0, has_children: !parent, name, label, lane,
    start_ms: START, end_ms: START + 60_000, open: false, status: 'unset', status_message: '', attributes,
    events: [], finding_ids: [], finding_keys: [], critical: false, links: { spark_ui: null, history_server: null } };
}

export function syntheticAttempt() {
  const phases = ['client', 'resource_wait', 'compute', 'io_write', 'idle', 'result_transfer'];
  const stages = Array.from({ length: 50 }, (_, s) => span(`d1d1d1d1d1d1${String(s).padStart(4, '0')}`, OPERATION, 'spark.stage', 'stage', `stage ${s}`, { 'spark.stage.id': s }));
  return {
    schema: 'sparktrace.attempt/1', kind: 'trace', identity: null, name: 'synthetic plan', trace_ids: [TRACE], state: 'success',
    in_progress: false, start_ms: START, end_ms: START + 60_000, wall_ms: 60_000, tries: [], previous_run: null, next_run: null,
    airflow_task: null,
    breakdown: { wall_ms: 60_000, phases: phases.map((phase) => ({ phase, label: phase, ms: phase === 'compute' ? 60_000 : 0, fraction: phase === 'compute' ? 1 : 0 })),
      intervals: [{ phase: 'compute', start_ms: START, end_ms: START + 60_000 }] },
    cost: null, what_if: null, findings: [], history: { runs: [], baseline: null, comparison: [] },
    downloads: { chrome_trace: '', otlp_json: '' },
    executors: { known: false, max: 0, series: [] },
    critical_path: { known: false, span_ids: [], segments: [], ms: 0, basis: '' },
    sql_executions: [{ span_id: SQL_SPAN, trace_id: TRACE, parent_id: OPERATION, execution_id: 1, description: 'synthetic 2,000-operator plan',
      status: 'unset', status_message: '', start_ms: START, end_ms: START + 60_000, job_ids: ['0'], plan_version: 'adaptive',
      operator_count: PLAN_NODES, operator_time_ms: 0, plan_truncated: false,
      plan_href: `/api/v1/traces/${TRACE}/sql-plan?span=${SQL_SPAN}`,
      top_operators: [{ node_id: null, name: 'Scan parquet t57_0', time_ms: 5000, rows: 10, spill_bytes: null, peak_memory_bytes: null }] }],
    spans: [span(OPERATION, '', 'spark_connect.operation', 'operation', 'query b1b1b1b1'),
      span(SQL_SPAN, OPERATION, 'spark.sql.execution', 'other', 'SQL 1', { 'spark.sql.execution_id': 1 }), ...stages],
  };
}

export const PLAN_PAGE_PATH = `/traces/${TRACE}`;

// Routes the page's two API answers to the synthetic ones.
export async function routeSyntheticPlan(context) {
  const attempt = JSON.stringify(syntheticAttempt());
  const plan = JSON.stringify({ schema: 'sparktrace.sql_plan/1', trace_id: TRACE, span_id: SQL_SPAN, execution_id: 1, plan: syntheticPlan() });
  await context.route((url) => url.pathname === `/api/v1/traces/${TRACE}`, (route) => route.fulfill({ contentType: 'application/json', body: attempt }));
  await context.route((url) => url.pathname === `/api/v1/traces/${TRACE}/sql-plan`, (route) => route.fulfill({ contentType: 'application/json', body: plan }));
}

// One measured run on `page` (its context routed, the ready probe installed); answers the times.
export async function measurePlanRun(page, base) {
  const t0 = performance.now();
  await page.goto(base + PLAN_PAGE_PATH, { waitUntil: 'commit' });
  await page.waitForSelector('body[data-ready="1"]', { state: 'attached' });
  const pageReadyMs = await page.evaluate(() => window.__benchProbe?.readyAt ?? performance.now());
  const wallReadyMs = performance.now() - t0;
  const timed = (action) => page.evaluate(async (what) => {
    const nextFrame = () => new Promise((resolve) => { requestAnimationFrame(() => setTimeout(resolve, 0)); });
    const start = performance.now();
    if (what === 'open') {
      document.querySelector('#sql-executions details > summary').click();
      while (!document.querySelector('.plan-row')) await nextFrame();
    } else {
      document.querySelector(what === 'unfold' ? '.plan-unfold' : '.plan-fold').click();
    }
    await nextFrame();
    return { ms: performance.now() - start, rows: document.querySelectorAll('.plan-row').length };
  }, action);
  const open = await timed('open');
  const unfold = await timed('unfold');
  const fold = await timed('fold');
  return {
    page_ready_ms: pageReadyMs, wall_ready_ms: wallReadyMs,
    open_ms: open.ms, rows_folded: open.rows, unfold_all_ms: unfold.ms, rows_unfolded: unfold.rows,
    fold_ms: fold.ms, rows_after_fold: fold.rows,
  };
}

// The search unfolds to the last branch's second scan and selects it (run once, after the measured runs).
export async function verifyPlanSearch(page) {
  await page.fill('.plan-search', 'Scan parquet t99_1');
  await page.press('.plan-search', 'Enter');
  await page.waitForSelector('.plan-row.selected');
  return (await page.textContent('.plan-row.selected .plan-label')) === 'Scan parquet t99_1';
}
