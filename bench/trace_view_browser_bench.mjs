#!/usr/bin/env node
// The trace view in a real browser at the issue's scale: how long the 20,000-span attempt page takes
// to open and become interactive in Chromium, and the task list over a store of --traces attempts,
// each against a baseline measured side by side: what any page must at least pay for the same data
// (fetch of the same API answer + JSON.parse, in the same browser, same origin, same fetch options).
//
//   node bench/trace_view_browser_bench.mjs [--build-dir build] [--traces 100000] [--runs 5]
//                                           [--out bench/results/trace_view_browser.json] [--plan-only]
//                                           [--plan-screenshot out.png]
//
// 1. `sparktrace-traceview-bench --keep` builds a temporary store (--traces small Airflow attempts +
//    one attempt of 200 jobs x 100 stages, 20,000+ spans) and times the API in-process (its JSON is
//    kept under "api_in_process").
// 2. `sparktrace ui --store` serves it; Debian's /usr/bin/chromium (playwright-core from
//    tests/browser/node_modules, never a downloaded browser) loads, in one unmeasured warm-up round
//    and then --runs rounds, each load in a fresh browser context (empty HTTP cache):
//      attempt_page      navigation start -> body[data-ready="1"] on the large attempt's page, then
//                        ArrowDown in the Gantt tree -> the selected row and #detail updated
//      attempt_fetch     baseline: fetch(the page's API URL) + .json() on a blank same-origin document
//      tasks_page        `/` -> ready (50 rows of --traces attempts)
//      tasks_fetch       baseline: fetch(the task list's API URL) + .json()
//    Page and baseline alternate which goes first from round to round. Before each measurement the
//    harness waits (at most 5 s) until Chromium's processes are idle: a new context's renderer
//    starting up, or a closed one freeing the 20,000-span page's heap, would otherwise compete with
//    the measured load for the 2 cores. CPU of the server, of Chromium and of other work on the
//    machine is recorded per measurement (/proc).
// 3. Checks that the page really rendered the attempt (span count in the Gantt header = the API's,
//    rows drawn, a search for a deep stage's label finds and selects exactly it, no page errors)
//    and the task list (50 rows, the total), else exits 1.
// 4. The SQL operator tree over a synthetic 2,000-operator plan (bench/sql_plan_browser_bench.mjs):
//    page ready, opening the plan, unfold all, fold to the hottest path, --runs rounds after a
//    warm-up, medians under "sql_plan_2000". With --plan-only only this part runs (no store is
//    built) and its figures replace that key of the existing --out file, the rest kept.
// 4b. The attempt of --calls one-call traces (a client without traceparent): its page to ready, --runs
//    loads after a warm-up ("calls_attempt"), and /healthz timed while 6 viewers revalidate the large
//    attempt back to back ("healthz_with_pollers").
// 5. Writes medians, ratios page/baseline and the issue's targets to --out and prints it; stops the
//    ui and the browser, deletes the store. Exit 0 when it ran (whatever the verdicts), 1 when a check
//    failed or something would not start, 130 when interrupted.

import { execFileSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PLAN_NODES, measurePlanRun, routeSyntheticPlan, verifyPlanSearch } from './sql_plan_browser_bench.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const requireFromTests = createRequire(path.join(ROOT, 'tests', 'browser', 'package.json'));
const { chromium } = requireFromTests('playwright-core');

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const VIEWPORT = { width: 1440, height: 900 };
const PAGE_TIMEOUT_MS = 60_000;       // one load of 13 MB of JSON on 2 busy cores stays far below this
const STORE_TIMEOUT_MS = 30 * 60_000;  // building a 100,000-attempt store
const UI_START_TIMEOUT_MS = 30_000;
const UI_RE = /^trace view (http:\/\/127\.0\.0\.1:\d+)\/$/;
const BLANK_PATH = '/assets/favicon.svg';  // a static same-origin document with no script of its own

// The issue's targets (ms).
const TARGET_PAGE_MS = 1000;
const TARGET_API_MS = 100;
const TARGET_LIST_MS = 50;

// ---- arguments ----

function parseArgs(argv) {
  const options = { buildDir: 'build', traces: 100_000, runs: 5, out: path.join('bench', 'results', 'trace_view_browser.json') };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${arg} needs a value`);
      i += 1;
      return argv[i];
    };
    if (arg === '--build-dir') options.buildDir = value();
    else if (arg === '--traces') options.traces = positiveInt(arg, value());
    else if (arg === '--runs') options.runs = positiveInt(arg, value());
    else if (arg === '--out') options.out = value();
    else if (arg === '--plan-only') options.planOnly = true;
    else if (arg === '--plan-screenshot') options.planScreenshot = value();
    else if (arg === '-h' || arg === '--help') usage(null);
    else usage(`unknown argument ${arg}`);
  }
  return options;
}

function positiveInt(flag, text) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) usage(`${flag} wants a positive integer, not ${JSON.stringify(text)}`);
  return n;
}

function usage(error) {
  const text = 'usage: node bench/trace_view_browser_bench.mjs [--build-dir DIR] [--traces N] [--runs N] [--out FILE] [--plan-only] [--plan-screenshot PNG]\n';
  if (error) {
    process.stderr.write(`trace_view_browser_bench: ${error}\n${text}`);
    process.exit(2);
  }
  process.stdout.write(text);
  process.exit(0);
}

// A path given on the command line: as given from the current directory, else from the repository.
function resolveFromCwdOrRoot(p) {
  if (path.isAbsolute(p)) return p;
  const fromCwd = path.resolve(p);
  return fs.existsSync(fromCwd) ? fromCwd : path.resolve(ROOT, p);
}

function log(message) {
  process.stderr.write(`[trace_view_browser_bench] ${message}\n`);
}

// ---- statistics ----

function median(values) {
  const xs = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (!xs.length) return null;
  const mid = Math.floor(xs.length / 2);
  return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

const round3 = (v) => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v * 1000) / 1000 : v ?? null);
const ratio = (a, b) => (a !== null && b !== null && b > 0 ? round3(a / b) : null);

// ---- CPU accounting ----
//
// The machine is shared: for every measured load, the CPU used by the ui (the server), by this
// process's other descendants (Chromium, this script) and by everything else on the machine
// ("foreign", in cores, over the measured wall time), from /proc. Read outside the timed windows.

const CLK_TCK = Number(commandOutput('getconf', ['CLK_TCK'])) || 100;
const DISTURBED_FOREIGN_CORES = 0.25;
const FOREIGN_MIN_WINDOW_MS = 100;
let serverPid = null;

function procStat(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK };
  } catch {
    return null;  // gone meanwhile
  }
}

function cpuSnapshot() {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
  const busyMs = ((line[0] + line[1] + line[2] + line[5] + line[6] + line[7]) * 1000) / CLK_TCK;
  const stats = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(name);
    if (st) stats.set(Number(name), st);
  }
  const children = new Map();
  for (const [pid, st] of stats) {
    if (!children.has(st.ppid)) children.set(st.ppid, []);
    children.get(st.ppid).push(pid);
  }
  let ownMs = 0;
  const stack = [process.pid];
  while (stack.length) {
    const pid = stack.pop();
    ownMs += stats.get(pid)?.cpuMs ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return {
    t: performance.now(), busyMs, ownMs,
    serverMs: serverPid !== null ? stats.get(serverPid)?.cpuMs ?? 0 : 0,
    selfMs: stats.get(process.pid)?.cpuMs ?? 0,
  };
}

function cpuBetween(a, b) {
  const wall = b.t - a.t;
  const server = b.serverMs - a.serverMs;
  const own = b.ownMs - a.ownMs;
  return {
    server_cpu_ms: server,
    browser_cpu_ms: own - server - (b.selfMs - a.selfMs),
    // /proc counts in ticks (10 ms): over a shorter window the share of other work means nothing.
    foreign_cpu_cores: wall >= FOREIGN_MIN_WINDOW_MS ? Math.max(b.busyMs - a.busyMs - own, 0) / wall : null,
  };
}

// Before each measurement: wait (bounded) until Chromium is quiet, so that a closed context's
// renderer tearing down its heap (a few hundred ms of CPU after the 20,000-span page) does not run
// into the next measurement. Answers the ms waited.
const SETTLE_WINDOW_MS = 100;
const SETTLE_QUIET_CPU_MS = 1000 / CLK_TCK;  // at most one tick of CPU in the window
const SETTLE_MAX_MS = 5000;

async function settle() {
  const start = performance.now();
  let previous = cpuSnapshot();
  while (performance.now() - start < SETTLE_MAX_MS) {
    await new Promise((resolve) => { setTimeout(resolve, SETTLE_WINDOW_MS); });
    const next = cpuSnapshot();
    if (cpuBetween(previous, next).browser_cpu_ms <= SETTLE_QUIET_CPU_MS) break;
    previous = next;
  }
  return performance.now() - start;
}

// ---- processes ----

const cleanups = [];  // run in reverse order by cleanUp()

async function cleanUp() {
  for (const fn of cleanups.splice(0).reverse()) {
    try {
      await fn();
    } catch (error) {
      log(`cleanup: ${error.message}`);
    }
  }
}

function waitExit(child, timeoutMs) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

// SIGTERM, then SIGKILL after 5 s: only this child, by its pid.
async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  if (!(await waitExit(child, 5000))) {
    child.kill('SIGKILL');
    await waitExit(child, 5000);
  }
}

// Runs the API benchmark to completion and answers its JSON.
async function buildStore(bin, store, traces) {
  const args = ['--store', store, '--traces', String(traces), '--jobs', '200', '--stages', '100', '--runs', '5', '--keep'];
  log(`${path.basename(bin)} ${args.join(' ')}`);
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => stopChild(child));
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk; });
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr = (stderr + chunk).slice(-8000); });
  const started = Date.now();
  const finished = await waitExit(child, STORE_TIMEOUT_MS);
  if (!finished) throw new Error(`${path.basename(bin)} did not finish within ${STORE_TIMEOUT_MS / 1000} s`);
  if (child.exitCode !== 0) throw new Error(`${path.basename(bin)} ended with ${child.exitCode ?? child.signalCode}:\n${stderr}`);
  let figures;
  try {
    figures = JSON.parse(stdout);
  } catch (error) {
    throw new Error(`${path.basename(bin)} printed no JSON (${error.message}):\n${stdout.slice(0, 2000)}`);
  }
  log(`store built and API timed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return figures;
}

// `sparktrace ui --store STORE --listen 127.0.0.1:0`: {base, child}.
// `proxy`: `sparktrace proxy` (which creates the store) instead, its admin port serving the page.
async function startUi(bin, store, { proxy = false } = {}) {
  const args = proxy
    ? ['proxy', '--upstream', '127.0.0.1:9', '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--store', store, '--drain-timeout', '1s', '--log-level', 'warn']
    : ['ui', '--store', store, '--listen', '127.0.0.1:0'];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => stopChild(child));
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr = (stderr + chunk).slice(-8000); });
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sparktrace ui printed no line within ${UI_START_TIMEOUT_MS} ms:\n${stderr}`)), UI_START_TIMEOUT_MS);
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      stdout += chunk;
      const nl = stdout.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(stdout.slice(0, nl).trim());
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`sparktrace ui exited (${code ?? signal}) before printing a line:\n${stderr}`));
    });
  });
  const match = proxy ? /admin=(127\.0\.0\.1:\d+)$/.exec(line) : UI_RE.exec(line);
  if (!match) throw new Error(`unexpected first line of sparktrace ${args[0]}: ${JSON.stringify(line)}\n${stderr}`);
  // Keep draining its output so that it never blocks on a full pipe.
  child.stdout.removeAllListeners('data');
  child.stdout.resume();
  return { base: proxy ? `http://${match[1]}` : match[1], child, stderr: () => stderr };
}

async function fetchJson(url) {
  const response = await fetch(url, { signal: AbortSignal.timeout(PAGE_TIMEOUT_MS) });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

// The attempt (or trace) API URL behind a page path: "/attempt?..." -> "/api/v1/attempt?...",
// "/traces/<id>" -> "/api/v1/traces/<id>".
function apiPathOf(pagePath) {
  const url = new URL(pagePath, 'http://x');
  return `/api/v1${url.pathname}${url.search}`;
}

// ---- in the browser ----

// Installed in every measured context before any page script: records when body[data-ready="1"]
// appears (performance.now(), whose origin is the navigation start) and the end of the next frame.
function readyProbe() {
  const probe = { readyAt: null, frameAfterReadyAt: null };
  window.__benchProbe = probe;
  const seen = () => {
    if (probe.readyAt !== null || document.body?.dataset.ready !== '1') return;
    probe.readyAt = performance.now();
    // The frame that shows what the page has just built, and the task after it.
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { probe.frameAfterReadyAt = performance.now(); };
      channel.port2.postMessage(null);
    });
  };
  new MutationObserver(seen).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-ready'] });
}

async function newContext(browser) {
  const context = await browser.newContext({
    viewport: VIEWPORT, deviceScaleFactor: 1, locale: 'en-US', timezoneId: 'UTC', reducedMotion: 'reduce',
  });
  context.setDefaultTimeout(PAGE_TIMEOUT_MS);
  context.setDefaultNavigationTimeout(PAGE_TIMEOUT_MS);
  await context.addInitScript(readyProbe);
  const page = await context.newPage();
  const settledMs = await settle();
  const errors = [];
  page.on('pageerror', (error) => errors.push(`page error: ${error}`));
  page.on('console', (message) => {
    // Chromium asks a document without <link rel=icon> (the baseline's) for /favicon.ico: a 404.
    if (message.type() === 'error' && !message.location()?.url?.endsWith('/favicon.ico')) errors.push(`console error: ${message.text()}`);
  });
  const requests = [];
  page.on('request', (request) => requests.push(request.url()));
  return { context, page, errors, requests, settledMs };
}

// Navigation start -> ready, measured in the page (performance.now()) and by the wall clock here.
async function loadToReady(page, url) {
  const c0 = cpuSnapshot();
  const t0 = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForFunction(() => typeof window.__benchProbe?.frameAfterReadyAt === 'number', null, { polling: 'raf' });
  const wallMs = performance.now() - t0;
  const cpu = cpuBetween(c0, cpuSnapshot());
  const inPage = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const probe = window.__benchProbe;
    return {
      readyAt: probe.readyAt,
      frameAfterReadyAt: probe.frameAfterReadyAt,
      domContentLoaded: nav?.domContentLoadedEventEnd ?? null,
      resources: performance.getEntriesByType('resource').map((e) => ({
        name: e.name, initiatorType: e.initiatorType, startTime: e.startTime, requestStart: e.requestStart,
        responseStart: e.responseStart, responseEnd: e.responseEnd, transferSize: e.transferSize,
        encodedBodySize: e.encodedBodySize, decodedBodySize: e.decodedBodySize,
      })),
      marks: performance.getEntriesByType('mark').map((m) => ({ name: m.name, startTime: m.startTime })),
      measures: performance.getEntriesByType('measure').map((m) => ({ name: m.name, startTime: m.startTime, duration: m.duration })),
    };
  });
  return { wallMs, cpu, ...inPage };
}

function resourceOf(resources, apiPath) {
  const matches = resources.filter((r) => new URL(r.name).pathname + new URL(r.name).search === apiPath
    || new URL(r.name).pathname === apiPath);
  return matches.at(-1) ?? null;
}

// The large attempt's page: ready, then one ArrowDown in the tree.
async function measureAttemptPage(browser, base, pagePath, apiPath, expected, { verifySearch }) {
  const { context, page, errors, settledMs } = await newContext(browser);
  try {
    const load = await loadToReady(page, base + pagePath);
    const api = resourceOf(load.resources, apiPath);
    if (!api) throw new Error(`the attempt page made no request to ${apiPath}: ${JSON.stringify(load.resources.map((r) => r.name))}`);
    const dataMark = load.marks.find((m) => m.name === 'sparktrace:attempt-data');
    const renderMeasure = load.measures.find((m) => m.name === 'sparktrace:attempt-render');
    const rendered = await page.evaluate(() => {
      const head = document.querySelector('#gantt .gantt-head-row:nth-child(2) .gantt-head-label')?.textContent ?? '';
      const scroller = document.querySelector('#gantt .gantt-scroll');
      return {
        spanHeader: head.trim(),
        treeItems: document.querySelectorAll('#gantt [role=treeitem]').length,
        bars: document.querySelectorAll('#gantt .bar[data-span-id]').length,
        visibleRows: scroller ? Math.round(document.querySelector('#gantt .gantt-canvas').getBoundingClientRect().height / 22) : 0,
        selected: document.querySelector('#gantt [role=treeitem][aria-selected="true"]')?.dataset.rowId ?? null,
        title: document.title,
        loading: !!document.querySelector('#main .loading'),
        error: document.querySelector('#main .error-view, #main [role=alert]')?.textContent ?? null,
      };
    });
    const countInHeader = Number((/([\d,]+) spans/.exec(rendered.spanHeader)?.[1] ?? '').replace(/,/g, ''));
    check(countInHeader === expected.spans, `attempt page: the Gantt header counts ${expected.spans} spans (says ${JSON.stringify(rendered.spanHeader)})`);
    check(rendered.treeItems >= 20 && rendered.bars >= 20, `attempt page: rows drawn (${rendered.treeItems} tree items, ${rendered.bars} bars)`);
    check(rendered.visibleRows >= 20, `attempt page: the tree lists the operations (${rendered.visibleRows} rows)`);
    check(rendered.selected === null, 'attempt page: nothing selected before the key press');
    check(!rendered.loading && rendered.error === null, `attempt page: no loading or error view (${rendered.error ?? ''})`);

    // Interactivity: focus the tree, press ArrowDown, wait until the first row is selected in the tree
    // and in #detail. The time is from the keydown event's timestamp to the frame after the change.
    await page.focus('#gantt [role=tree]');
    await page.evaluate(() => {
      const probe = { keyAt: null, changedAt: null, frameAfterChangeAt: null };
      window.__benchKey = probe;
      document.addEventListener('keydown', (event) => { if (probe.keyAt === null) probe.keyAt = event.timeStamp; }, { capture: true, once: true });
      const done = () => {
        if (probe.changedAt !== null) return;
        const row = document.querySelector('#gantt [role=treeitem][aria-selected="true"]');
        const detailId = document.querySelector('#detail [data-field=id]')?.textContent.trim();
        if (!row || row.dataset.rowId !== detailId) return;
        probe.changedAt = performance.now();
        probe.selected = row.dataset.rowId;
        requestAnimationFrame(() => {
          const channel = new MessageChannel();
          channel.port1.onmessage = () => { probe.frameAfterChangeAt = performance.now(); };
          channel.port2.postMessage(null);
        });
      };
      new MutationObserver(done).observe(document.getElementById('main'), { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-selected'] });
    });
    const k0 = performance.now();
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction(() => typeof window.__benchKey?.frameAfterChangeAt === 'number', null, { polling: 'raf' });
    const keyWallMs = performance.now() - k0;
    const key = await page.evaluate(() => window.__benchKey);
    check(key.selected === expected.firstSpanId, `ArrowDown selects the first span ${expected.firstSpanId} (got ${key.selected})`);
    check(key.keyAt !== null, 'the keydown reached the page');

    let search = null;
    if (verifySearch) search = await verifyDeepSearch(page, expected);
    check(errors.length === 0, `attempt page: no page or console errors ${JSON.stringify(errors.slice(0, 5))}`);
    return {
      navigation_to_ready_ms: load.readyAt,
      navigation_to_frame_after_ready_ms: load.frameAfterReadyAt,
      wall_goto_to_frame_after_ready_ms: load.wallMs,
      dom_content_loaded_ms: load.domContentLoaded,
      api_request_start_ms: api.requestStart || api.startTime,
      api_response_start_ms: api.responseStart,
      api_response_end_ms: api.responseEnd,
      api_ttfb_ms: api.responseStart - (api.requestStart || api.startTime),
      api_response_end_to_ready_ms: load.readyAt - api.responseEnd,
      api_response_end_to_data_ms: dataMark ? dataMark.startTime - api.responseEnd : null,
      data_to_ready_ms: renderMeasure ? renderMeasure.duration : null,
      api_transfer_bytes: api.transferSize,
      api_encoded_bytes: api.encodedBodySize,
      api_decoded_bytes: api.decodedBodySize,
      arrow_down_to_selected_ms: key.changedAt - key.keyAt,
      arrow_down_to_frame_after_ms: key.frameAfterChangeAt - key.keyAt,
      arrow_down_wall_ms: keyWallMs,
      ...load.cpu,
      settle_wait_ms: settledMs,
      tree_items_in_dom: rendered.treeItems,
      visible_rows: rendered.visibleRows,
      search,
    };
  } finally {
    await context.close();
  }
}

// The attempt of a call per trace (sparktrace-traceview-bench --calls: 48,000 one-span traces): its page
// to ready in a fresh context, --runs times after one warm-up, and what its answer carries.
async function measureCallsAttempt(browser, base, pagePath, runs) {
  const apiPath = apiPathOf(pagePath);
  const answer = await fetchJson(base + apiPath);
  const bound = answer.span_bound ?? null;
  check(Array.isArray(answer.spans) && answer.spans.length > 0, `the calls attempt answers spans (${answer.spans?.length})`);
  const loads = [];
  for (let i = -1; i < runs; i += 1) {
    const { context, page, errors, settledMs } = await newContext(browser);
    try {
      const load = await loadToReady(page, base + pagePath);
      const api = resourceOf(load.resources, apiPath);
      const rendered = await page.evaluate(() => ({
        bars: document.querySelectorAll('#gantt .bar[data-span-id]').length,
        groups: document.querySelectorAll('.span-groups tbody tr').length,
        error: document.querySelector('#main .error-view, #main [role=alert]')?.textContent ?? null,
      }));
      check(rendered.bars >= 20 && rendered.error === null, `calls attempt page: rows drawn, no error (${rendered.bars} bars, ${rendered.error ?? ''})`);
      check(errors.length === 0, `calls attempt page: no page or console errors ${JSON.stringify(errors.slice(0, 5))}`);
      const figures = {
        navigation_to_ready_ms: load.readyAt,
        navigation_to_frame_after_ready_ms: load.frameAfterReadyAt,
        api_ttfb_ms: api ? api.responseStart - (api.requestStart || api.startTime) : null,
        api_response_end_ms: api?.responseEnd ?? null,
        api_transfer_bytes: api?.transferSize ?? null,
        api_decoded_bytes: api?.decodedBodySize ?? null,
        span_group_rows: rendered.groups,
        ...load.cpu,
        settle_wait_ms: settledMs,
      };
      if (i >= 0) loads.push(figures);
      log(`calls attempt ${i < 0 ? 'warm-up' : `load ${i + 1}`}: ready ${figures.navigation_to_ready_ms} ms, ttfb ${figures.api_ttfb_ms} ms`);
    } finally {
      await context.close();
    }
  }
  const names = Object.keys(loads[0]).filter((name) => typeof loads[0][name] === 'number');
  return {
    page: pagePath,
    span_bound: bound,
    span_groups: (answer.span_groups ?? []).map((g) => ({ lane: g.lane, label: g.label, count: g.count })),
    spans_listed: answer.spans.length,
    trace_ids: answer.trace_ids.length,
    medians_ms: Object.fromEntries(names.map((name) => [name, round3(median(loads.map((l) => l[name])))])),
    loads,
  };
}

// /healthz while 6 viewers poll the large attempt as the page does while an attempt runs (a
// conditional GET every 2 s; here back to back, the worst case), each GET of /healthz timed.
async function measureHealthzWithPollers(base, apiPath, viewers = 6, probes = 40) {
  const first = await fetch(base + apiPath, { headers: { 'Accept-Encoding': 'gzip' } });
  const etag = first.headers.get('ETag');
  await first.arrayBuffer();
  let stop = false;
  const counts = { polls: 0, not_modified: 0 };
  const pollers = Array.from({ length: viewers }, async () => {
    while (!stop) {
      const response = await fetch(base + apiPath, { headers: { 'If-None-Match': etag, 'Accept-Encoding': 'gzip' } });
      await response.arrayBuffer();
      counts.polls += 1;
      if (response.status === 304) counts.not_modified += 1;
    }
  });
  const times = [];
  const c0 = cpuSnapshot();
  const t0 = performance.now();
  for (let i = 0; i < probes; i += 1) {
    await new Promise((resolve) => { setTimeout(resolve, 25); });
    const started = performance.now();
    const response = await fetch(`${base}/healthz`);
    await response.text();
    times.push(performance.now() - started);
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuBetween(c0, cpuSnapshot());
  stop = true;
  await Promise.all(pollers);
  times.sort((a, b) => a - b);
  return {
    viewers, probes, etag,
    polls_per_s: round3(counts.polls / seconds),
    not_modified_fraction: round3(counts.not_modified / Math.max(1, counts.polls)),
    healthz_median_ms: round3(median(times)),
    healthz_p95_ms: round3(times[Math.floor(times.length * 0.95)]),
    healthz_max_ms: round3(times.at(-1)),
    server_cpu_ms: cpu.server_cpu_ms ?? null,
  };
}

// Once per run: a search for the label of a stage deep in the tree (collapsed at first) finds exactly
// one span, selects it (opening its ancestors) and shows it in #detail.
async function verifyDeepSearch(page, expected) {
  const t0 = performance.now();
  await page.fill('#find', expected.deepLabel);
  await page.press('#find', 'Enter');
  await page.waitForFunction((id) => document.querySelector('#gantt [role=treeitem][aria-selected="true"]')?.dataset.rowId === id
    && document.querySelector('#detail [data-field=id]')?.textContent.trim() === id, expected.deepId);
  const ms = performance.now() - t0;
  const count = (await page.textContent('#find-count'))?.trim();
  check(count === '1 match', `#find "${expected.deepLabel}" finds one span (says ${JSON.stringify(count)})`);
  const label = (await page.textContent('#gantt [role=treeitem][aria-selected="true"] .row-label'))?.trim();
  check(label === expected.deepLabel, `the selected row is labelled ${JSON.stringify(expected.deepLabel)} (${JSON.stringify(label)})`);
  return { label: expected.deepLabel, span_id: expected.deepId, matches: count, fill_to_selected_wall_ms: round3(ms) };
}

// Baseline: on a blank same-origin document, fetch the same URL with the page's own fetch options
// (api.js) and parse it: transfer + JSON.parse of the same answer, nothing else.
async function measureFetch(browser, base, apiPath) {
  const { context, page, errors } = await newContext(browser);
  try {
    // Chromium then fetches /favicon.ico for it; that request is over before the measured one starts.
    const favicon = page.waitForResponse((r) => r.url().endsWith('/favicon.ico'), { timeout: 3000 }).catch(() => null);
    await page.goto(base + BLANK_PATH, { waitUntil: 'load' });
    await favicon;
    const settledMs = await settle();
    const c0 = cpuSnapshot();
    const result = await page.evaluate(async (url) => {
      const t0 = performance.now();
      const response = await fetch(url, { credentials: 'same-origin', cache: 'no-cache', headers: { Accept: 'application/json' } });
      const t1 = performance.now();
      const data = await response.json();
      const t2 = performance.now();
      const entry = performance.getEntriesByType('resource').filter((e) => e.name.endsWith(url)).at(-1);
      return {
        status: response.status, ms: t2 - t0, headersMs: t1 - t0,
        spans: Array.isArray(data.spans) ? data.spans.length : null,
        tasks: Array.isArray(data.tasks) ? data.tasks.length : null, total: data.total ?? null,
        requestStart: entry?.requestStart || entry?.startTime, responseStart: entry?.responseStart, responseEnd: entry?.responseEnd,
        fetchStart: t0, parsedAt: t2,
        transfer: entry?.transferSize, encoded: entry?.encodedBodySize, decoded: entry?.decodedBodySize,
      };
    }, apiPath);
    const cpu = cpuBetween(c0, cpuSnapshot());
    check(result.status === 200, `baseline fetch ${apiPath}: 200 (got ${result.status})`);
    check(errors.length === 0, `baseline document: no errors ${JSON.stringify(errors.slice(0, 5))}`);
    return {
      fetch_json_ms: result.ms,
      fetch_headers_ms: result.headersMs,
      ttfb_ms: result.responseStart - result.requestStart,
      response_end_to_parsed_ms: result.parsedAt - result.responseEnd,
      transfer_bytes: result.transfer,
      encoded_bytes: result.encoded,
      decoded_bytes: result.decoded,
      spans: result.spans,
      tasks: result.tasks,
      total: result.total,
      ...cpu,
      settle_wait_ms: settledMs,
    };
  } finally {
    await context.close();
  }
}

// The task list `/`: ready with its 50 rows.
async function measureTasksPage(browser, base, expected) {
  const { context, page, errors, requests, settledMs } = await newContext(browser);
  try {
    const load = await loadToReady(page, `${base}/`);
    const apiUrl = requests.find((u) => new URL(u).pathname === '/api/v1/tasks');
    check(Boolean(apiUrl), `tasks page: requested /api/v1/tasks (${JSON.stringify(requests)})`);
    const u = new URL(apiUrl);
    const apiPath = u.pathname + u.search;
    const api = resourceOf(load.resources, apiPath);
    const rendered = await page.evaluate(() => ({
      rows: document.querySelectorAll('table#tasks tbody tr[data-href]').length,
      status: document.querySelector('#main .page-sub')?.textContent ?? '',
      pager: document.querySelector('.pager-status')?.textContent ?? '',
    }));
    check(rendered.rows === 50, `tasks page: 50 rows (${rendered.rows})`);
    const total = Number((/^([\d,]+) attempts/.exec(rendered.status)?.[1] ?? '').replace(/,/g, ''));
    check(total === expected.attempts, `tasks page: says ${expected.attempts} attempts (${JSON.stringify(rendered.status)})`);
    check(errors.length === 0, `tasks page: no page or console errors ${JSON.stringify(errors.slice(0, 5))}`);
    return {
      apiPath,
      figures: {
        navigation_to_ready_ms: load.readyAt,
        navigation_to_frame_after_ready_ms: load.frameAfterReadyAt,
        wall_goto_to_frame_after_ready_ms: load.wallMs,
        dom_content_loaded_ms: load.domContentLoaded,
        api_ttfb_ms: api ? api.responseStart - (api.requestStart || api.startTime) : null,
        api_response_end_ms: api?.responseEnd ?? null,
        api_response_end_to_ready_ms: api ? load.readyAt - api.responseEnd : null,
        api_transfer_bytes: api?.transferSize ?? null,
        api_decoded_bytes: api?.decodedBodySize ?? null,
        ...load.cpu,
        settle_wait_ms: settledMs,
      },
    };
  } finally {
    await context.close();
  }
}

// ---- checks ----

const checks = [];

function check(ok, what) {
  checks.push({ ok: Boolean(ok), what });
  if (!ok) throw new CheckFailed(what);
}

class CheckFailed extends Error {}

// ---- machine ----

function commandOutput(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim();
  } catch {
    return null;
  }
}

function machine(browserVersion) {
  const cpuModel = os.cpus()[0]?.model ?? null;
  return {
    nproc: Number(commandOutput('nproc', [])) || os.availableParallelism?.() || os.cpus().length,
    cpu_model: cpuModel,
    memory_gib: round3(os.totalmem() / 2 ** 30),
    kernel: os.release(),
    node: process.version,
    chromium: commandOutput(CHROMIUM, ['--version']),
    chromium_browser_version: browserVersion,
    playwright_core: requireFromTests('playwright-core/package.json').version,
    git_commit: commandOutput('git', ['-C', ROOT, 'rev-parse', 'HEAD']),
    git_dirty: (commandOutput('git', ['-C', ROOT, 'status', '--porcelain', '--untracked-files=no']) ?? '') !== '',
  };
}

// ---- main ----

function medians(rounds, key) {
  const names = Object.keys(rounds[0]?.[key] ?? {}).filter((name) => typeof rounds[0][key][name] === 'number');
  return Object.fromEntries(names.map((name) => [name, round3(median(rounds.map((r) => r[key][name])))]));
}

function summarise(options, apiFigures, expected, warmup, rounds, browserVersion, startedAt, loadStart) {
  const attempt = medians(rounds, 'attempt_page');
  const attemptFetch = medians(rounds, 'attempt_fetch');
  const tasks = medians(rounds, 'tasks_page');
  const tasksFetch = medians(rounds, 'tasks_fetch');
  const api = apiFigures.median_ms ?? {};
  const targets = [
    {
      name: 'attempt_page_interactive',
      description: `the ${expected.spans}-span attempt page, navigation start -> body[data-ready] drawn and the main thread free `
        + '(the task after the next frame); baseline: fetch + json() of the same answer. ArrowDown then selects within arrow_down_ms',
      value_ms: attempt.navigation_to_frame_after_ready_ms,
      threshold_ms: TARGET_PAGE_MS,
      baseline_ms: attemptFetch.fetch_json_ms,
      ratio_to_baseline: ratio(attempt.navigation_to_frame_after_ready_ms, attemptFetch.fetch_json_ms),
      navigation_to_ready_ms: attempt.navigation_to_ready_ms,
      arrow_down_ms: attempt.arrow_down_to_frame_after_ms,
    },
    {
      name: 'attempt_api',
      description: 'GET of the large attempt, in-process (sparktrace-traceview-bench attempt_api; baseline get_trace: reading its spans only)',
      value_ms: round3(api.attempt_api),
      threshold_ms: TARGET_API_MS,
      baseline_ms: round3(api.get_trace_baseline),
      ratio_to_baseline: ratio(api.attempt_api, api.get_trace_baseline),
      over_http_ttfb_ms: attemptFetch.ttfb_ms,  // the browser baseline's request -> first byte (gzip included)
    },
    {
      name: 'tasks_list_page',
      description: `GET /api/v1/tasks (first 50 of ${expected.attempts}), in-process (baseline traces_list: ListTraces(50))`,
      value_ms: round3(api.list_page),
      threshold_ms: TARGET_LIST_MS,
      baseline_ms: round3(api.traces_list_baseline),
      ratio_to_baseline: ratio(api.list_page, api.traces_list_baseline),
      over_http_ttfb_ms: tasksFetch.ttfb_ms,
    },
  ].map((t) => ({ ...t, verdict: t.value_ms === null ? 'FAIL' : t.value_ms < t.threshold_ms ? 'PASS' : 'FAIL' }));
  const disturbed = [];
  rounds.forEach((r, i) => {
    for (const kind of ['attempt_page', 'attempt_fetch', 'tasks_page', 'tasks_fetch']) {
      if (r[kind].foreign_cpu_cores > DISTURBED_FOREIGN_CORES) disturbed.push(`round ${i + 1} ${kind}: ${r[kind].foreign_cpu_cores} cores of other work`);
    }
  });
  return {
    benchmark: 'trace_view_browser',
    schema: 1,
    generated_at: new Date().toISOString(),
    duration_s: round3((Date.now() - startedAt) / 1000),
    config: {
      traces: options.traces, jobs: 200, stages: 100, runs: options.runs, warmup_rounds: 1,
      viewport: VIEWPORT, chromium_args: CHROMIUM_ARGS, executable: CHROMIUM,
      attempt_page: expected.pagePath, attempt_api: expected.apiPath, tasks_api: expected.tasksApiPath,
      baseline_document: BLANK_PATH,
      notes: [
        'every load in a fresh browser context (empty HTTP cache); the server is warm after one unmeasured warm-up round',
        'page and baseline alternate which goes first from round to round',
        '*_ms from the page are performance.now() (origin: navigation start); wall_* by the harness around page.goto/keyboard.press (CDP round trips included)',
        'baselines: fetch(the same URL, the page\'s fetch options) + response.json() on a blank same-origin document',
        'the server answers gzip (Accept-Encoding from Chromium); transfer bytes are compressed, decoded bytes are what JSON.parse reads',
        `server_cpu_ms / browser_cpu_ms / foreign_cpu_cores per measurement from /proc (10 ms ticks; foreign is null below ${FOREIGN_MIN_WINDOW_MS} ms); `
          + `foreign > ${DISTURBED_FOREIGN_CORES} cores is listed in disturbed_measurements`,
        'before each measurement the harness waits (settle_wait_ms, at most 5 s) until Chromium is idle (a new context\'s renderer start-up, a closed one\'s teardown)',
      ],
    },
    machine: { ...machine(browserVersion), loadavg_start: loadStart, loadavg_end: os.loadavg().map(round3) },
    store: apiFigures.store,
    attempt_answer: { ...apiFigures.attempt_answer, spans_in_browser: expected.spans },
    medians_ms: {
      attempt_page: attempt,
      attempt_fetch_baseline: attemptFetch,
      tasks_page: tasks,
      tasks_fetch_baseline: tasksFetch,
      api_in_process: api,
    },
    ratios: {
      attempt_page_ready_vs_fetch_json: ratio(attempt.navigation_to_ready_ms, attemptFetch.fetch_json_ms),
      attempt_page_frame_after_ready_vs_fetch_json: ratio(attempt.navigation_to_frame_after_ready_ms, attemptFetch.fetch_json_ms),
      attempt_response_end_to_ready_vs_fetch_response_end_to_parsed: ratio(attempt.api_response_end_to_ready_ms, attemptFetch.response_end_to_parsed_ms),
      attempt_page_ttfb_vs_fetch_ttfb: ratio(attempt.api_ttfb_ms, attemptFetch.ttfb_ms),
      tasks_page_ready_vs_fetch_json: ratio(tasks.navigation_to_ready_ms, tasksFetch.fetch_json_ms),
      attempt_api_vs_get_trace_in_process: ratio(api.attempt_api, api.get_trace_baseline),
      list_page_vs_traces_list_in_process: ratio(api.list_page, api.traces_list_baseline),
    },
    targets,
    checks: { passed: checks.filter((c) => c.ok).length, failed: checks.filter((c) => !c.ok).map((c) => c.what) },
    disturbed_measurements: disturbed,
    search_check: rounds.find((r) => r.attempt_page.search)?.attempt_page.search ?? null,
    api_in_process: apiFigures,
    warmup: warmup,
    rounds,
  };
}

function stripRound(r) {
  const clean = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'number' ? round3(v) : v]));
  return {
    order: r.order,
    attempt_page: clean(r.attempt_page), attempt_fetch: clean(r.attempt_fetch),
    tasks_page: clean(r.tasks_page), tasks_fetch: clean(r.tasks_fetch),
  };
}

async function round(browser, base, expected, index, verifySearch) {
  const pageFirst = index % 2 === 0;
  const attemptPair = [
    async () => measureAttemptPage(browser, base, expected.pagePath, expected.apiPath, expected, { verifySearch }),
    async () => measureFetch(browser, base, expected.apiPath),
  ];
  const result = { order: pageFirst ? 'page_first' : 'baseline_first' };
  if (pageFirst) {
    result.attempt_page = await attemptPair[0]();
    result.attempt_fetch = await attemptPair[1]();
  } else {
    result.attempt_fetch = await attemptPair[1]();
    result.attempt_page = await attemptPair[0]();
  }
  check(result.attempt_fetch.spans === expected.spans, `baseline fetch parsed ${expected.spans} spans (${result.attempt_fetch.spans})`);
  let tasks;
  if (pageFirst) {
    tasks = await measureTasksPage(browser, base, expected);
    result.tasks_page = tasks.figures;
    result.tasks_fetch = await measureFetch(browser, base, tasks.apiPath);
  } else {
    result.tasks_fetch = await measureFetch(browser, base, expected.tasksApiPath);
    tasks = await measureTasksPage(browser, base, expected);
    result.tasks_page = tasks.figures;
  }
  check(tasks.apiPath === expected.tasksApiPath, `the tasks page fetches ${expected.tasksApiPath} (${tasks.apiPath})`);
  check(result.tasks_fetch.tasks === 50 && result.tasks_fetch.total === expected.attempts, `baseline task list: 50 of ${expected.attempts}`);
  const r = stripRound(result);
  log(`round ${index < 0 ? 'warm-up' : index + 1}: attempt ready ${r.attempt_page.navigation_to_ready_ms} ms (fetch+json ${r.attempt_fetch.fetch_json_ms} ms), `
    + `ArrowDown ${r.attempt_page.arrow_down_to_frame_after_ms} ms; tasks ready ${r.tasks_page.navigation_to_ready_ms} ms (fetch+json ${r.tasks_fetch.fetch_json_ms} ms)`);
  return r;
}

// The operator tree of a 2,000-operator plan: one warm-up run, then `runs`, each in a fresh context.
async function measurePlanTree(browser, base, runs, screenshot) {
  const loadStart = os.loadavg().map(round3);
  const all = [];
  let searchFound = false;
  for (let i = -1; i < runs; i += 1) {
    const { context, page, errors } = await newContext(browser);
    await routeSyntheticPlan(context);
    const run = await measurePlanRun(page, base);
    check(errors.length === 0, `no page errors on the plan page (${errors.join('; ')})`);
    check(run.rows_unfolded === PLAN_NODES, `unfold all draws ${PLAN_NODES} rows (${run.rows_unfolded})`);
    check(run.rows_folded < 300 && run.rows_after_fold === run.rows_folded, `the plan opens folded (${run.rows_folded} rows) and folds back (${run.rows_after_fold})`);
    if (i === runs - 1) {
      searchFound = await verifyPlanSearch(page);
      // The tree as it opens (folded to the hottest path), then the search's find selected.
      if (screenshot) await page.locator('#sql-executions').screenshot({ path: screenshot });
    }
    await context.close();
    if (i >= 0) all.push(run);
    log(`plan run ${i < 0 ? 'warm-up' : i + 1}: ready ${run.page_ready_ms.toFixed(0)} ms, open ${run.open_ms.toFixed(0)} ms, unfold all ${run.unfold_all_ms.toFixed(0)} ms, fold ${run.fold_ms.toFixed(0)} ms`);
  }
  check(searchFound, 'the search finds the last branch\'s scan and unfolds to it');
  const med = (key) => round3(median(all.map((r) => r[key])));
  return {
    plan_nodes: PLAN_NODES, runs,
    // 1, 5, 15-minute load averages at the start and the end: on the 2 shared cores, what else ran.
    load_average: { start: loadStart, end: os.loadavg().map(round3) },
    notes: ['synthetic plan: a Union of 100 twenty-operator branches (aggregates, exchanges, a sort-merge join of two scans), 5 metrics per node, served by Playwright routes to the real page assets',
      'page_ready_ms: navigation start -> body[data-ready]; open_ms: click on the execution -> plan fetched, parsed and drawn folded, next frame',
      'unfold_all_ms / fold_ms: click -> rows drawn and the next frame (2,000 rows / folded to the hottest path)'],
    median_ms: { page_ready: med('page_ready_ms'), open: med('open_ms'), unfold_all: med('unfold_all_ms'), fold: med('fold_ms') },
    rows_folded: all[0]?.rows_folded ?? null,
    rounds: all.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'number' ? round3(v) : v]))),
  };
}

async function launchChromium() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: UI_START_TIMEOUT_MS,
    env: { ...process.env, LANG: 'en_US.UTF-8', TZ: 'UTC' },
    // Signals are handled below (Playwright's own SIGINT handler would exit before the cleanup).
    handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false,
  });
  cleanups.push(() => browser.close());
  return browser;
}

// --plan-only: the operator tree's figures into the existing --out file, under sql_plan_2000.
async function planOnly(options, sparktrace, out) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sparktrace-tv-plan-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  // A proxy's admin port serves the page over a store it creates (empty: the page's API answers are routed).
  const ui = await startUi(sparktrace, path.join(dir, 'empty.db'), { proxy: true });
  serverPid = ui.child.pid;
  const browser = await launchChromium();
  const figures = fs.existsSync(out) ? JSON.parse(fs.readFileSync(out, 'utf8')) : { benchmark: 'trace_view_browser', schema: 1 };
  figures.sql_plan_2000 = { generated_at: new Date().toISOString(), chromium: browser.version(), ...await measurePlanTree(browser, ui.base, options.runs, options.planScreenshot) };
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(figures, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(figures.sql_plan_2000, null, 2)}\n`);
  log(`wrote sql_plan_2000 into ${path.relative(process.cwd(), out) || out}`);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const startedAt = Date.now();
  const loadStart = os.loadavg().map(round3);
  const buildDir = resolveFromCwdOrRoot(options.buildDir);
  const sparktrace = path.join(buildDir, 'sparktrace');
  const apiBench = path.join(buildDir, 'sparktrace-traceview-bench');
  for (const bin of options.planOnly ? [sparktrace, CHROMIUM] : [sparktrace, apiBench, CHROMIUM]) {
    if (!fs.existsSync(bin)) throw new Error(`${bin} is missing (make build, scripts/deps.sh)`);
  }
  const out = path.isAbsolute(options.out) ? options.out : path.resolve(process.cwd(), options.out);
  if (options.planOnly) {
    await planOnly(options, sparktrace, out);
    return;
  }

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sparktrace-tv-browser-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const store = path.join(dir, 'traces.db');
  const apiFigures = await buildStore(apiBench, store, options.traces);
  if (apiFigures.kept_store !== store) throw new Error(`the store was not kept: ${JSON.stringify(apiFigures.kept_store)}`);

  const ui = await startUi(sparktrace, store);
  serverPid = ui.child.pid;
  log(`sparktrace ui at ${ui.base}/`);
  const pagePath = apiFigures.large_attempt_page;
  const apiPath = apiPathOf(pagePath);
  // What the checks compare with, read once from the API outside the browser.
  const attempt = await fetchJson(ui.base + apiPath);
  const stages = attempt.spans.filter((s) => s.name === 'spark.stage');
  const deep = stages[Math.floor(stages.length * 0.6)];
  const list = await fetchJson(`${ui.base}/api/v1/tasks?limit=50&offset=0`);
  const expected = {
    pagePath, apiPath, tasksApiPath: '/api/v1/tasks?limit=50&offset=0',
    spans: attempt.spans.length, firstSpanId: attempt.spans[0].id,
    deepLabel: deep.label, deepId: deep.id, attempts: list.total,
  };
  check(expected.spans === apiFigures.store.large_attempt_spans, `the API answers all ${apiFigures.store.large_attempt_spans} spans (${expected.spans})`);
  check(expected.spans >= 20_000 && stages.length >= 20_000, `at least 20,000 spans and stages (${expected.spans}, ${stages.length})`);
  check(expected.attempts === apiFigures.store.attempts_listed, `the task list counts ${apiFigures.store.attempts_listed} attempts (${expected.attempts})`);
  check(stages.filter((s) => s.label === deep.label).length === 1, `the label ${JSON.stringify(deep.label)} is unique`);

  const browser = await launchChromium();
  const browserVersion = browser.version();
  log(`chromium ${browserVersion}; 1 warm-up round, then ${options.runs}`);

  const warmup = await round(browser, ui.base, expected, -1, false);
  const rounds = [];
  for (let i = 0; i < options.runs; i += 1) {
    rounds.push(await round(browser, ui.base, expected, i, i === options.runs - 1));
    if (ui.child.exitCode !== null) throw new Error(`sparktrace ui exited (${ui.child.exitCode}):\n${ui.stderr()}`);
  }

  const figures = summarise(options, apiFigures, expected, warmup, rounds, browserVersion, startedAt, loadStart);
  if (apiFigures.calls_attempt_page) {
    figures.calls_attempt = await measureCallsAttempt(browser, ui.base, apiFigures.calls_attempt_page, options.runs);
    figures.targets.push({
      name: 'calls_attempt_page_ready',
      description: `the attempt of ${apiFigures.calls} one-call traces, navigation start -> body[data-ready] drawn (fresh context each load)`,
      value_ms: figures.calls_attempt.medians_ms.navigation_to_frame_after_ready_ms,
      threshold_ms: 2000,
    });
    const inProcess = apiFigures.calls_attempt;
    figures.targets.push({
      name: 'calls_attempt_api',
      description: 'GET of the one-call-per-trace attempt, in-process, built (no answer cache): wall ms on this machine now',
      value_ms: round3(inProcess.api_ms), cpu_ms: round3(inProcess.cpu_ms?.api ?? null), threshold_ms: 1000,
    });
  }
  figures.healthz_with_pollers = await measureHealthzWithPollers(ui.base, apiPath);
  figures.targets.push({
    name: 'healthz_with_6_pollers',
    description: '/healthz median while 6 viewers revalidate the large attempt back to back',
    value_ms: figures.healthz_with_pollers.healthz_median_ms, p95_ms: figures.healthz_with_pollers.healthz_p95_ms,
    threshold_ms: 100,
  });
  for (const t of figures.targets) {
    if (t.verdict === undefined) t.verdict = t.value_ms === null ? 'FAIL' : t.value_ms < t.threshold_ms ? 'PASS' : 'FAIL';
  }
  figures.sql_plan_2000 = await measurePlanTree(browser, ui.base, options.runs, options.planScreenshot);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(figures, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  log(`wrote ${path.relative(process.cwd(), out) || out}`);
  for (const t of figures.targets) {
    log(`${t.verdict} ${t.name}: ${t.value_ms} ms (target < ${t.threshold_ms} ms; baseline ${t.baseline_ms} ms, ratio ${t.ratio_to_baseline})`);
  }
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (interrupted) return;  // the cleanup is already under way
    interrupted = true;
    log(`${signal}: stopping`);
    cleanUp().finally(() => process.exit(130));
  });
}

try {
  await main();
  await cleanUp();
} catch (error) {
  if (!interrupted) {
    log(error instanceof CheckFailed ? `CHECK FAILED: ${error.message}` : `error: ${error.stack ?? error.message}`);
    await cleanUp();
    process.exit(1);
  }
}
