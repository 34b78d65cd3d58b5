// Dev-only browser check of the pages against the fixture server, in headless Chromium:
//   node --experimental-websocket web/dev/browser_check.mjs BASE_URL OUT_DIR [--axe PATH/axe.min.js]
// Loads each page, waits for body[data-ready], checks the stable hooks and interactions, records
// console errors (CSP violations show there), runs axe-core when given, and saves screenshots.

import { readFileSync, mkdirSync } from 'node:fs';
import { launch } from './cdp.mjs';

const [base, outDir] = process.argv.slice(2);
const axeAt = process.argv.indexOf('--axe');
const axeSource = axeAt > 0 ? readFileSync(process.argv[axeAt + 1], 'utf8') : null;
mkdirSync(outDir, { recursive: true });
let failures = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures += 1;
};
const MAIN = '/attempt?dag=etl_orders&task=load_orders&run=scheduled__2026-11-25T06%3A00%3A00%2B00%3A00&try=2';
const BIG = '/attempt?dag=big_dag&task=many_stages&run=scheduled__2026-11-25T00%3A00%3A00%2B00%3A00&try=1';
const RUNNING = '/attempt?dag=ml_features&task=build_features&run=manual__2026-11-25T09%3A12%3A44.120113%2B00%3A00&try=1&map=3';

async function axe(page, name) {
  if (!axeSource) return;
  await page.evaluate(axeSource);
  const result = await page.evaluate(`axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.length, target: v.nodes[0].target.join(' '), summary: v.nodes[0].failureSummary})))`);
  const serious = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  for (const v of result) console.log(`     axe ${v.impact} ${v.id} x${v.nodes} ${v.target} :: ${(v.summary ?? '').replace(/\s+/g, ' ').slice(0, 200)}`);
  check(serious.length === 0, `${name}: axe finds no serious/critical violation (${result.length} minor)`);
}

function errorsOf(page) {
  const bad = page.messages.filter((m) => /exception|error|Refused|Content Security Policy/i.test(m));
  page.messages.length = 0;
  return bad;
}

async function run(dark) {
  const suffix = dark ? '-dark' : '';
  const page = await launch({ width: 1366, height: 768, dark });
  try {
    // Task list
    let ms = await page.goto(`${base}/`);
    check(true, `tasks ready in ${ms} ms`);
    const tasks = await page.evaluate(`({rows: document.querySelectorAll('table#tasks tr[data-href]').length, form: !!document.querySelector('form#task-filters'),
      prev: document.querySelector('#page-prev')?.disabled, next: document.querySelector('#page-next')?.disabled, title: document.title})`);
    check(tasks.rows === 50 && tasks.form && tasks.prev === true && tasks.next === false, `tasks hooks ${JSON.stringify(tasks)}`);
    await page.screenshot(`${outDir}/tasks${suffix}.png`);
    await axe(page, 'tasks');
    check(errorsOf(page).length === 0, 'tasks: no console errors');

    // Main attempt
    ms = await page.goto(`${base}${MAIN}`);
    check(ms < 3000, `attempt ready in ${ms} ms`);
    // No waiting from here: everything must be drawn when the page says it is ready.
    const geo = await page.evaluate(`(() => {
      const bar = document.querySelector('#breakdown');
      const total = bar.getBoundingClientRect().width;
      const segs = [...bar.children].map(c => ({phase: c.dataset.phase, ms: +c.dataset.ms, w: c.getBoundingClientRect().width}));
      const sum = segs.reduce((a, s) => a + s.ms, 0);
      return {n: segs.length, worst: Math.max(...segs.map(s => Math.abs(s.w - s.ms / sum * total)))};
    })()`);
    check(geo.n === 6 && geo.worst <= 1, `breakdown: 6 segments, widths within 1 px (${geo.worst.toFixed(3)})`);
    await page.screenshot(`${outDir}/attempt${suffix}.png`);
    await page.screenshot(`${outDir}/attempt-full${suffix}.png`, { fullPage: true });
    const hooks = await page.evaluate(`({bars: document.querySelectorAll('#gantt [data-span-id].bar').length,
      critical: document.querySelectorAll('#gantt .bar.critical').length, rows: document.querySelectorAll('[data-row-id]').length,
      expanded: document.querySelectorAll('[data-row-id][aria-expanded]').length, lanePaths: document.querySelectorAll('#executor-lane path').length,
      findings: document.querySelectorAll('#findings [data-finding-id]').length, history: !!document.querySelector('#history'),
      comparison: !!document.querySelector('#comparison'), chrome: document.querySelector('a#download-chrome')?.getAttribute('href'),
      otlp: !!document.querySelector('a#download-otlp'), detail: document.querySelector('#detail')?.getAttribute('aria-label'),
      toggle: !!document.querySelector('#toggle-critical'), find: !!document.querySelector('#find'), reset: !!document.querySelector('#zoom-reset'),
      title: document.title})`);
    check(hooks.bars > 10 && hooks.critical > 3 && hooks.expanded > 3 && hooks.lanePaths === 1 && hooks.findings === 5 && hooks.history && hooks.comparison && hooks.otlp && hooks.detail === 'Span details', `attempt hooks ${JSON.stringify(hooks)}`);

    // In-page jump links scroll without reloading the page.
    await page.evaluate(`document.querySelector('.jumps a[href="#timeline-title"]').click()`);
    await new Promise((r) => setTimeout(r, 100));
    const jumped = await page.evaluate(`({ready: document.body.dataset.ready, top: Math.round(document.querySelector('#timeline-title').getBoundingClientRect().top), y: Math.round(scrollY)})`);
    check(jumped.ready === '1' && jumped.y > 500 && jumped.top < 120, `jump link scrolls in place ${JSON.stringify(jumped)}`);
    await page.evaluate('scrollTo(0, 0)');

    // Click the first finding: its spans are selected.
    await page.evaluate(`document.querySelector('#findings [data-finding-id="resource-wait-long"] h3').click()`);
    await new Promise((r) => setTimeout(r, 250));
    const sel = await page.evaluate(`({selected: document.querySelector('#gantt .bar.selected')?.dataset.spanId, detail: document.querySelector('#detail [data-field=id]')?.textContent, url: location.search})`);
    check(sel.selected && sel.selected === sel.detail && sel.url.includes('span='), `finding click selects its span ${JSON.stringify(sel)}`);
    await page.screenshot(`${outDir}/attempt-finding${suffix}.png`);

    // Keyboard: focus the tree, move down three rows (below the Airflow task's row and two RPCs: the
    // first operation), collapse/expand.
    await page.evaluate(`document.querySelector('[role=tree]').focus()`);
    await page.key('Home');
    await page.key('ArrowDown');
    await page.key('ArrowDown');
    await page.key('ArrowDown');
    await new Promise((r) => setTimeout(r, 100));
    const kb = await page.evaluate(`({pos: document.querySelector('.tree-row.selected')?.dataset.position, active: document.querySelector('[role=tree]').getAttribute('aria-activedescendant')})`);
    check(kb.pos === '3' && kb.active, `arrow keys move the selection ${JSON.stringify(kb)}`);
    const rowCount = `document.querySelectorAll('[data-row-id]').length`;
    const rowsOpen = await page.evaluate(rowCount);
    await page.key('ArrowLeft');
    await new Promise((r) => setTimeout(r, 80));
    const folded = await page.evaluate(`({expanded: document.querySelector('.tree-row.selected').getAttribute('aria-expanded'), rows: ${rowCount}})`);
    await page.key('ArrowRight');
    await new Promise((r) => setTimeout(r, 80));
    const unfolded = await page.evaluate(`({expanded: document.querySelector('.tree-row.selected').getAttribute('aria-expanded'), rows: ${rowCount}})`);
    check(folded.expanded === 'false' && folded.rows < rowsOpen && unfolded.expanded === 'true' && unfolded.rows === rowsOpen,
      `left/right fold and unfold ${JSON.stringify({ rowsOpen, folded, unfolded })}`);
    await page.key('Escape');
    await new Promise((r) => setTimeout(r, 80));
    check(await page.evaluate(`!document.querySelector('#detail [data-field=id]') && !document.querySelector('.bar.selected')`), 'Escape clears the selection');
    await page.key('ArrowDown');
    await page.key('ArrowDown');
    await page.key('ArrowDown');

    // Search.
    await page.key('/');
    await page.evaluate(`(() => { const f = document.querySelector('#find'); f.value = 'sortMergeJoin'; f.dispatchEvent(new Event('input', {bubbles: true})); })()`);
    await new Promise((r) => setTimeout(r, 300));
    await page.key('Enter');
    await new Promise((r) => setTimeout(r, 150));
    const found = await page.evaluate(`({count: document.querySelector('#find-count').textContent, sel: document.querySelector('.tree-row.selected .row-label')?.textContent, url: location.search})`);
    check(found.count === '2 matches' && /sortMergeJoin/.test(found.sel ?? '') && found.url.includes('find='), `search ${JSON.stringify(found)}`);

    // Critical toggle, zoom, reset.
    await page.evaluate(`document.querySelector('#toggle-critical').click()`);
    await new Promise((r) => setTimeout(r, 100));
    const critOff = await page.evaluate(`document.querySelectorAll('#gantt .bar.critical').length`);
    await page.evaluate(`document.querySelector('#toggle-critical').click()`);
    check(critOff === 0, 'critical toggle hides the overlay');
    await page.evaluate(`document.querySelector('[role=tree]').focus()`);
    await page.key('+', { code: 'Equal' });
    await page.key('+', { code: 'Equal' });
    await new Promise((r) => setTimeout(r, 300));
    const zoomed = await page.evaluate(`({url: location.search, reset: document.querySelector('#zoom-reset').disabled})`);
    check(/from=/.test(zoomed.url) && zoomed.reset === false, `+ zooms ${JSON.stringify(zoomed)}`);
    await page.screenshot(`${outDir}/attempt-zoomed${suffix}.png`);
    await page.evaluate(`document.querySelector('#zoom-reset').click()`);
    await new Promise((r) => setTimeout(r, 300));
    check(!(await page.evaluate('location.search')).includes('from='), 'reset zoom clears from/to');

    // Ctrl + wheel over the bars zooms at the pointer; dragging across the overview picks a window.
    const box = await page.evaluate(`(() => { document.querySelector('.timeline-card').scrollIntoView(); const b = document.querySelector('svg.bars').getBoundingClientRect(); const o = document.querySelector('svg.overview').getBoundingClientRect(); return {x: b.left + b.width / 2, y: b.top + 40, ox: o.left, ow: o.width, oy: o.top + o.height / 2}; })()`);
    await page.send('Input.dispatchMouseEvent', { type: 'mouseWheel', x: box.x, y: box.y, deltaX: 0, deltaY: -300, modifiers: 2 });
    await new Promise((r) => setTimeout(r, 300));
    const wheeled = await page.evaluate('location.search');
    check(/from=/.test(wheeled), `ctrl+wheel zooms ${wheeled}`);
    await page.send('Input.dispatchMouseEvent', { type: 'mousePressed', x: box.ox + box.ow * 0.2, y: box.oy, button: 'left', clickCount: 1 });
    await page.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: box.ox + box.ow * 0.3, y: box.oy, button: 'left', buttons: 1 });
    await page.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: box.ox + box.ow * 0.4, y: box.oy, button: 'left', buttons: 1 });
    await page.send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: box.ox + box.ow * 0.4, y: box.oy, button: 'left', clickCount: 1 });
    await new Promise((r) => setTimeout(r, 300));
    const brushed = Object.fromEntries(new URLSearchParams(await page.evaluate('location.search')));
    const total = 8100000;
    check(Math.abs(brushed.from - total * 0.2) < total * 0.01 && Math.abs(brushed.to - total * 0.4) < total * 0.01, `overview drag picks the window ${JSON.stringify(brushed)}`);
    await page.evaluate(`document.querySelector('#zoom-reset').click()`);
    await page.evaluate('scrollTo(0, 0)');
    await axe(page, 'attempt');
    check(errorsOf(page).length === 0, `attempt: no console errors`);

    // Restore from URL.
    await page.goto(`${base}${MAIN}&span=${sel.selected}&from=2000000&to=4200000&find=stage`);
    const restored = await page.evaluate(`({sel: document.querySelector('#gantt .bar.selected')?.dataset.spanId, find: document.querySelector('#find').value, zoom: document.querySelector('.zoom-label').textContent})`);
    check(restored.sel === sel.selected && restored.find === 'stage' && /33:20/.test(restored.zoom), `URL restores the view ${JSON.stringify(restored)}`);

    if (dark) return;

    // 20,000 spans.
    ms = await page.goto(`${base}${BIG}`, { timeoutMs: 30000 });
    check(ms < 2500, `20,000-span attempt ready in ${ms} ms`);
    const big = await page.evaluate(`(async () => {
      const rowsInDom = document.querySelectorAll('[data-row-id]').length;
      const t0 = performance.now();
      document.querySelector('#expand-all').click();
      await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
      const expandMs = performance.now() - t0;
      const scroller = document.querySelector('.gantt-scroll');
      const t1 = performance.now();
      for (let i = 0; i < 20; i++) { scroller.scrollTop = i * 20000; await new Promise(r => requestAnimationFrame(r)); }
      const scrollMs = (performance.now() - t1) / 20;
      const t2 = performance.now();
      const f = document.querySelector('#find'); f.value = 'stage 50 of op 199'; f.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
      await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
      const findMs = performance.now() - t2;
      return {rowsInDom, after: document.querySelectorAll('[data-row-id]').length, total: scroller.scrollHeight / 22, expandMs, scrollMs, findMs,
        count: document.querySelector('#find-count').textContent, sel: document.querySelector('.tree-row.selected .row-label')?.textContent};
    })()`);
    check(big.rowsInDom < 80 && big.after < 80 && big.total >= 20000 && big.scrollMs < 50 && big.expandMs < 300, `big: virtualised and fast ${JSON.stringify(big)}`);
    await page.screenshot(`${outDir}/big.png`);
    check(errorsOf(page).length === 0, 'big: no console errors');

    // Running attempt: polls and grows.
    await page.goto(`${base}${RUNNING}`);
    const lastSeen = `[...document.querySelectorAll('.identity div')].find(d => d.textContent.startsWith('Last seen'))?.textContent`;
    const before = await page.evaluate(lastSeen);
    await page.evaluate(`document.querySelector('[role=tree]').focus()`);
    await page.key('End');
    await new Promise((r) => setTimeout(r, 4500));
    const after = await page.evaluate(`({seen: ${lastSeen}, open: document.querySelectorAll('.bar.open').length, selected: document.querySelector('.tree-row.selected')?.dataset.position})`);
    check(after.open > 0 && after.seen !== before && after.selected !== undefined, `running: polled, redrawn, selection kept ${JSON.stringify({ before, after })}`);
    await page.screenshot(`${outDir}/running.png`);
    await page.evaluate(`document.querySelector('.timeline-card').scrollIntoView()`);
    await page.screenshot(`${outDir}/running-timeline.png`);
    check(errorsOf(page).length === 0, 'running: no console errors');

    // Trace without identity, recipe, errors.
    await page.goto(`${base}/traces/${await page.evaluate(`fetch('/api/v1/tasks?limit=200').then(r => r.json()).then(d => d.tasks.find(t => t.kind === 'trace').trace_ids[0])`)}`);
    await page.screenshot(`${outDir}/trace.png`);
    await axe(page, 'trace');
    await page.goto(`${base}/recipes/troubleshoot/resource-wait-long.md`);
    await page.screenshot(`${outDir}/recipe.png`);
    const recipe = await page.evaluate(`({h1: document.querySelector('article h1')?.textContent, tables: document.querySelectorAll('article table').length, title: document.title})`);
    check(recipe.tables >= 2 && /resource wait/i.test(recipe.h1), `recipe renders ${JSON.stringify(recipe)}`);
    await axe(page, 'recipe');
    await page.goto(`${base}/attempt?dag=nope&task=nope&run=nope&try=1`);
    check(/No such task attempt/.test(await page.evaluate('document.querySelector("main").textContent')), '404 page');
    await page.screenshot(`${outDir}/not-found.png`);
    await page.goto(`${base}/attempt?dag=needs_token&task=x&run=y&try=1`);
    check(/token=/.test(await page.evaluate('document.querySelector("main").textContent')), '401 page');
    await page.goto(`${base}/attempt?dag=store_busy&task=x&run=y&try=1`);
    const retry = await page.evaluate('!!document.querySelector("#retry")');
    check(retry, 'busy/network error offers Retry');
    check(errorsOf(page).filter((m) => !/status of (401|404|503)/.test(m)).length === 0, 'pages: no console errors besides the expected HTTP errors');
  } finally {
    await page.close();
  }
}

await run(false);
await run(true);
console.log(failures ? `${failures} failed` : 'all browser checks passed');
process.exit(failures ? 1 : 0);
