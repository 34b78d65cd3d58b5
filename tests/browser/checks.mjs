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
