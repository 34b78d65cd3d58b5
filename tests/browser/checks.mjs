// What the browser tests read off the page, and the figures they expect from the API's JSON
// (docs/trace-view-api.md). The expectations are computed here from the API numbers, never from
// the page's own modules.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';

export const SIX_PHASES = ['client', 'resource_wait', 'compute', 'io_write', 'idle', 'result_transfer'];

// ---- the breakdown bar ----

// {width (content box, px), segments: [{phase, ms, width}]} as laid out on screen.
export function readBreakdown(page) {
  return page.$eval('#breakdown', (bar) => {
    const style = getComputedStyle(bar);
    const px = (name) => parseFloat(style[name]) || 0;
    const width = bar.getBoundingClientRect().width - px('paddingLeft') - px('paddingRight')
      - px('borderLeftWidth') - px('borderRightWidth');
    return {
      width,
      segments: [...bar.querySelectorAll('[data-phase]')].map((el) => ({
        phase: el.dataset.phase, ms: Number(el.dataset.ms), width: el.getBoundingClientRect().width,
      })),
    };
  });
}

export function assertBreakdownMatches(geometry, attempt) {
  const phases = attempt.breakdown.phases;
  assert.deepEqual(phases.map((p) => p.phase), SIX_PHASES, 'the API gives the six phases in order');
  const total = phases.reduce((sum, p) => sum + p.ms, 0);
  assert.ok(Math.abs(total - attempt.breakdown.wall_ms) < 1e-3, `API phases add up to wall_ms: ${total} vs ${attempt.breakdown.wall_ms}`);
  assert.ok(geometry.width > 300, `the bar is laid out (${geometry.width} px wide)`);
  assert.deepEqual(geometry.segments.map((s) => s.phase), SIX_PHASES, '#breakdown has all six [data-phase] segments, in order');
  geometry.segments.forEach((segment, i) => {
    const expected = (phases[i].ms / total) * geometry.width;
    assert.ok(Math.abs(segment.width - expected) <= 1,
      `#breakdown [data-phase=${segment.phase}] is ${segment.width.toFixed(2)} px; ${phases[i].ms} ms of ${total} ms `
      + `is ${expected.toFixed(2)} px of ${geometry.width.toFixed(2)} px`);
    assert.ok(Math.abs(segment.ms - phases[i].ms) < 1e-6, `data-ms of ${segment.phase}: ${segment.ms} vs API ${phases[i].ms}`);
  });
  const sum = geometry.segments.reduce((a, s) => a + s.width, 0);
  assert.ok(Math.abs(sum - geometry.width) <= 1, `segments add up to the bar: ${sum.toFixed(2)} vs ${geometry.width.toFixed(2)} px`);
}

// ---- the Gantt ----

// The rows and bars on screen (the Gantt is virtualised: only rows in view exist).
export function readGantt(page) {
  return page.evaluate(() => {
    const svg = document.querySelector('#gantt svg.bars');
    const origin = svg.getBoundingClientRect();
    const tree = document.querySelector('#gantt [role=tree]');
    return {
      width: origin.width,
      activeDescendant: tree.getAttribute('aria-activedescendant'),
      rows: [...tree.querySelectorAll('[role=treeitem]')].map((row) => ({
        id: row.dataset.rowId, elementId: row.id, expanded: row.getAttribute('aria-expanded'),
        selected: row.getAttribute('aria-selected'), classes: [...row.classList],
      })),
      bars: [...svg.querySelectorAll('[data-span-id]')].map((bar) => {
        const rect = bar.getBoundingClientRect();
        return { id: bar.dataset.spanId, classes: [...bar.classList], x: rect.left - origin.left, width: rect.width };
      }),
    };
  });
}

// Waits until the Gantt has drawn rows and bars (it draws on the animation frame after ready).
export async function waitGantt(page) {
  await page.waitForSelector('#gantt [role=treeitem]');
  await page.waitForSelector('#gantt svg.bars [data-span-id]', { state: 'attached' });
}

// Each bar's left edge and width, against the span's times in the window [from, to] (ms since the
// attempt's start) over the chart's width. Bars keep a minimum width of a pixel or two.
export function assertBarsPlaced(gantt, attempt, from, to) {
  const spans = new Map(attempt.spans.map((s) => [s.id, s]));
  const k = gantt.width / (to - from);
  let checked = 0;
  for (const bar of gantt.bars) {
    const span = spans.get(bar.id);
    assert.ok(span, `bar for an unknown span ${bar.id}`);
    const x0 = Math.max((span.start_ms - attempt.start_ms - from) * k, 0);
    const x1 = Math.min((span.end_ms - attempt.start_ms - from) * k, gantt.width);
    assert.ok(Math.abs(bar.x - x0) <= 1, `bar ${bar.id} (${span.label}) starts at ${bar.x.toFixed(2)} px, its start is at ${x0.toFixed(2)} px`);
    if (x1 - x0 >= 3) {
      assert.ok(Math.abs(bar.width - (x1 - x0)) <= 1, `bar ${bar.id} (${span.label}) is ${bar.width.toFixed(2)} px wide, its span ${(x1 - x0).toFixed(2)} px`);
    } else {
      assert.ok(bar.width <= 4, `bar ${bar.id} (${span.label}) of a ${(x1 - x0).toFixed(2)} px span is ${bar.width.toFixed(2)} px wide`);
    }
    checked += 1;
  }
  return checked;
}

// Every bar on screen is `critical` exactly when its span is on the API's critical path.
export function assertCriticalBars(gantt, attempt) {
  const onPath = new Set(attempt.critical_path.span_ids);
  let critical = 0;
  for (const bar of gantt.bars) {
    const expected = onPath.has(bar.id);
    assert.equal(bar.classes.includes('critical'), expected,
      `bar ${bar.id}: class critical ${bar.classes.includes('critical')}, on critical_path.span_ids ${expected}`);
    if (expected) critical += 1;
  }
  return critical;
}

// The ids of span `index`'s descendants (spans come in tree order: parent before children).
export function descendantsOf(spans, index) {
  const out = [];
  for (let i = index + 1; i < spans.length && spans[i].depth > spans[index].depth; i += 1) out.push(spans[i].id);
  return out;
}

// ---- search ----

function valueText(value) {
  if (Array.isArray(value)) return value.map(valueText).join(' ');
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

// Spans whose name, label or an attribute value contains `term`, case-insensitively (what #find's
// label promises: "Find spans by name, label or attribute value").
export function spansMatching(attempt, term) {
  const needle = term.toLowerCase();
  return attempt.spans.filter((span) => [span.label, span.name, ...Object.values(span.attributes ?? {}).map(valueText)]
    .some((text) => String(text ?? '').toLowerCase().includes(needle))).map((s) => s.id);
}

export function spansMatchingLabelOrName(attempt, term) {
  const needle = term.toLowerCase();
  return attempt.spans.filter((span) => `${span.label}\n${span.name}`.toLowerCase().includes(needle)).map((s) => s.id);
}

// ---- the request log ----

export function assertSameOrigin(requests, base) {
  assert.ok(requests.length > 0, 'the page made requests');
  const outside = requests.filter((url) => !url.startsWith(`${base}/`));
  assert.deepEqual(outside, [], `every request stays on ${base}/`);
}

export function assertNoCspViolations(record) {
  const cspConsole = record.consoleErrors.filter((text) => /Content Security Policy|Refused to/i.test(text));
  assert.deepEqual(record.cspViolations, [], 'no securitypolicyviolation events');
  assert.deepEqual(cspConsole, [], 'no CSP errors on the console');
}

export function assertNoErrors(record) {
  assert.deepEqual(record.pageErrors, [], 'no uncaught errors in the page');
  assert.deepEqual(record.consoleErrors, [], 'no errors on the console');
}

// ---- accessibility ----

const require = createRequire(import.meta.url);
let axeSource = null;

// axe-core's violations of impact serious or critical on the page as it is now. The axe source is
// evaluated through the DevTools protocol, which the page's CSP does not govern (the page itself
// never gets an inline script).
export async function seriousAxeViolations(page) {
  axeSource ??= fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  if (!await page.evaluate(() => typeof window.axe === 'object')) await page.evaluate(`${axeSource}\n;void 0`);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 8).map((n) => ({ target: n.target.join(' '), summary: n.failureSummary })),
    more: Math.max(v.nodes.length - 8, 0),
  }));
}

// ---- Airflow's task (`airflow_task`) ----

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

// A duration as the page prints it ("950 ms", "4.2 s", "2 min 30 s", "2h 15m", "20m 03s",
// "2h 15m 00s", "3d 04h 10m") read back: {ms, tolerance}, the tolerance being half the last printed
// digit. Null when the text holds no duration.
export function parseShownDuration(text) {
  const parts = [...String(text).matchAll(/(\d+(?:\.(\d+))?)\s*(ms|min|s|m|h|d)\b/g)];
  if (!parts.length) return null;
  let ms = 0;
  let tolerance = Infinity;
  for (const [, value, decimals, unit] of parts) {
    ms += Number(value) * UNIT_MS[unit];
    tolerance = Math.min(tolerance, (UNIT_MS[unit] / 10 ** (decimals?.length ?? 0)) / 2);
  }
  return { ms, tolerance };
}

// Asserts that `text` prints `ms` (to its precision).
export function assertShowsDuration(text, ms, what) {
  const shown = parseShownDuration(text);
  assert.ok(shown, `${what}: "${text}" holds a duration`);
  assert.ok(Math.abs(shown.ms - ms) <= shown.tolerance + 1e-6,
    `${what}: "${text}" is ${shown.ms} ms (± ${shown.tolerance}), the API says ${ms} ms`);
}

// What the attempt page shows of Airflow's task (null parts where it shows none).
export function readAirflowHeader(page) {
  return page.evaluate(() => {
    const text = (el) => (el ? el.textContent.replace(/\s+/g, ' ').trim() : null);
    const figures = (root) => [...(root?.querySelectorAll('[data-part]') ?? [])].map((el) => ({
      part: el.dataset.part, ms: Number(el.dataset.ms), text: text(el), strong: text(el.querySelector('strong')),
    }));
    const badge = document.querySelector('#airflow-state .airflow-state');
    const identity = Object.fromEntries([...document.querySelectorAll('.attempt-head dl.identity > div')]
      .map((d) => [text(d.querySelector('dt')), text(d.querySelector('dd'))]));
    const times = document.querySelector('#task-times');
    const outside = document.querySelector('#outside-spark');
    const client = document.querySelector('#breakdown [data-phase="client"]');
    return {
      airflowState: badge ? { state: badge.dataset.state, text: text(badge), source: text(document.querySelector('#airflow-state .state-source-name')) } : null,
      sparkState: text(document.querySelector('#spark-state')),
      titleStates: [...document.querySelectorAll('.attempt-head .title-row .state')].map(text),
      operator: identity.Operator ?? null,
      host: identity.Host ?? null,
      times: times ? { text: text(times), figures: figures(times) } : null,
      outside: outside ? { ms: Number(outside.dataset.ms), text: text(outside), figures: figures(outside) } : null,
      clientMs: client ? Number(client.dataset.ms) : null,
      clientLegend: text(document.querySelector('.phase-legend li[data-phase="client"] .legend-label')),
      lead: text(document.querySelector('.breakdown-card .lead')),
    };
  });
}

const closeMs = (a, b) => Math.abs(a - b) <= 1e-3;

// The header and the breakdown show the API's `airflow_task`: Airflow's state (words, not colour
// alone) and operator beside Spark's state, Airflow's wall time, Spark's part and the rest, and the
// time outside Spark (the breakdown's client phase) in its three parts.
export function assertAirflowTaskShown(shown, attempt) {
  const task = attempt.airflow_task;
  assert.ok(shown.airflowState, '#airflow-state: the header shows Airflow\'s state');
  assert.equal(shown.airflowState.state, task.state, '#airflow-state data-state');
  assert.ok(shown.airflowState.text.includes(task.state.replace(/_/g, ' ')), `Airflow's state in words: "${shown.airflowState.text}" for ${task.state}`);
  assert.equal(shown.airflowState.source, 'Airflow');
  assert.match(shown.sparkState ?? '', new RegExp(`^Spark\\b.*\\b${attempt.state}$`), `#spark-state: Spark's state (${attempt.state}) as before`);
  if (task.operator) assert.equal(shown.operator, task.operator, 'the operator class');
  else assert.equal(shown.operator, null, 'no operator shown when it is unknown');
  if (task.hostname) assert.equal(shown.host, task.hostname, 'the host');

  assert.ok(shown.times, '#task-times: Airflow\'s wall time against Spark\'s');
  const expected = [
    ['airflow_task', 'Airflow task', task.wall_ms], ['spark', 'Spark', task.spark_ms], ['outside_spark', 'outside Spark', task.outside_spark.ms],
  ];
  assert.deepEqual(shown.times.figures.map((f) => f.part), expected.map(([part]) => part), '#task-times: three figures in order');
  expected.forEach(([part, label, ms], i) => {
    const figure = shown.times.figures[i];
    assert.ok(closeMs(figure.ms, ms), `#task-times [data-part=${part}] data-ms ${figure.ms}, the API says ${ms}`);
    assert.ok(figure.text.startsWith(`${label} `), `#task-times [data-part=${part}] reads "${figure.text}"`);
    assertShowsDuration(figure.strong, ms, `#task-times ${label}`);
  });

  // The breakdown: its client phase is the time outside Spark, shown with its three parts.
  assert.ok(closeMs(shown.clientMs, task.outside_spark.ms),
    `#breakdown [data-phase=client] is ${shown.clientMs} ms, outside Spark ${task.outside_spark.ms} ms`);
  assert.ok(shown.outside, '#outside-spark: the time outside Spark in its parts');
  assert.ok(closeMs(shown.outside.ms, task.outside_spark.ms), `#outside-spark data-ms ${shown.outside.ms}`);
  assert.ok(shown.outside.text.startsWith('Outside Spark '), `#outside-spark reads "${shown.outside.text}"`);
  const parts = [
    ['before_first_call', 'before the first Spark call'], ['between_calls', 'between Spark calls'], ['after_last_call', 'after the last Spark call'],
  ];
  assert.deepEqual(shown.outside.figures.map((f) => f.part), parts.map(([part]) => part), '#outside-spark: three parts in order');
  parts.forEach(([part, label], i) => {
    const figure = shown.outside.figures[i];
    const ms = task.outside_spark[`${part}_ms`];
    assert.ok(closeMs(figure.ms, ms), `#outside-spark [data-part=${part}] data-ms ${figure.ms}, the API says ${ms}`);
    assert.ok(figure.text.endsWith(label), `#outside-spark [data-part=${part}] reads "${figure.text}"`);
    assertShowsDuration(figure.strong, ms, `#outside-spark ${label}`);
  });
}

// Without `airflow_task` the page shows nothing of it: one state badge, no Airflow figures.
export function assertNoAirflowTaskShown(shown) {
  assert.equal(shown.airflowState, null, 'no #airflow-state');
  assert.equal(shown.sparkState, null, 'no #spark-state (the state badge stands alone, as before)');
  assert.equal(shown.titleStates.length, 1, `one state badge in the title row: ${JSON.stringify(shown.titleStates)}`);
  assert.equal(shown.times, null, 'no #task-times');
  assert.equal(shown.outside, null, 'no #outside-spark');
  assert.equal(shown.operator, null, 'no operator');
  assert.equal(shown.host, null, 'no host');
  assert.doesNotMatch(shown.lead ?? '', /Airflow/, 'the lead sentence says nothing of Airflow\'s task');
}
