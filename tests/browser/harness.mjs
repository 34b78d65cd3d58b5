// The servers and the browser behind the trace view's browser tests.
//
// - startDemo(): `sparktrace demo --once` in a temp dir (an Airflow task's trace in sparktrace-demo.db),
//   then `sparktrace ui --store` over that file.
// - startDemo({ postgres: true }): the same with the trace in a real PostgreSQL 15 (Debian's, started
//   by tests/support/postgres_server.py on a unix socket, stopped by Harness.close()).
// - startRealLogProxy(log): `sparktrace proxy` following a copy of a real Spark event log (by default a
//   Kubernetes NYC-taxi job: 6 jobs, 4 executors, 69 s of resource wait); its trace view is on the
//   admin port.
// - startSimProxy(attempts): `sparktrace proxy` in front of `sparktrace sim`, and one Spark Connect
//   ExecutePlan per Airflow attempt given, with its x-airflow-* identity (node:http2, protobuf by hand).
//   startSimAndProxy() and executePlan() are its two halves, for a test that shapes the call itself.
// - launchBrowser() / openPage(): Debian's chromium (/usr/bin/chromium) driven by playwright-core,
//   never a downloaded browser; every page records its requests, console errors, page errors and CSP
//   violations.
//
// Everything listens on 127.0.0.1 port 0; everything started here is stopped by Harness.close().
// Waits are for conditions (a printed line, an API row, document.body.dataset.ready), each bounded.

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');

export const BIN = process.env.SPARKTRACE_BIN || path.join(ROOT, 'build', 'sparktrace');
export const CHROMIUM = process.env.SPARKTRACE_CHROMIUM || '/usr/bin/chromium';
export const DATA_DIR = process.env.SPARKTRACE_DATA_DIR || path.resolve(ROOT, '..', 'shared', 'data');
export const REAL_LOG = path.join(DATA_DIR, 'spark-events-thirdparty', 'kubeflow-mcp-shs',
  'eventlog_v2_spark-110be3a8424d4a2789cb88134418217b');
// Apache Spark's own test log with a broadcast hash join, its metrics and driver-side updates.
export const JOIN_LOG = path.join(DATA_DIR, 'spark-events', 'app-20200706201101-0003');
export const ARTIFACTS = process.env.SPARKTRACE_ARTIFACTS || path.join(os.tmpdir(), 'sparktrace-browser-artifacts');

// Playwright's bound on every wait and action; the servers get more (sanitizer builds are slow).
export const PAGE_TIMEOUT_MS = 15_000;
const START_TIMEOUT_MS = 30_000;
const DEMO_TIMEOUT_MS = 120_000;
const PG_TIMEOUT_MS = 60_000;
const TRACE_APPEAR_TIMEOUT_MS = 30_000;

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// The demo's page address: /attempt?… or the earlier /tasks/<dag>/<task>/<run>/<try>.
const OPEN_RE = /^open: +http:\/\/[0-9.:]+(\/(?:attempt\?|tasks\/)\S+)$/m;
const SIM_RE = /^listening grpc=(127\.0\.0\.1:\d+)$/;
const CALL_TIMEOUT_MS = 20_000;
const UI_RE = /^trace view (http:\/\/127\.0\.0\.1:\d+)\/$/;
const LISTENING_RE = /^listening grpc=(127\.0\.0\.1:\d+) admin=(127\.0\.0\.1:\d+)$/;

function tail(text, chars = 4000) {
  return text.length > chars ? `…${text.slice(-chars)}` : text;
}

// A child process (sparktrace, unless `program` says otherwise) whose output is kept (stderr bounded)
// and always drained, so it never blocks on a full pipe.
class Child {
  constructor(args, { program = BIN, ...options } = {}) {
    this.args = args;
    this.program = program;
    this.proc = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    this.stdout = '';
    this.stderr = '';
    this.exited = false;
    this.exitCode = null;
    this.proc.stdout.setEncoding('utf8');
    this.proc.stderr.setEncoding('utf8');
    this.proc.stdout.on('data', (chunk) => {
      this.stdout = tail(this.stdout + chunk, 200_000);
      this.emitLines();
    });
    this.proc.stderr.on('data', (chunk) => {
      this.stderr = tail(this.stderr + chunk, 20_000);
    });
    this.lineWaiters = [];
    this.exitPromise = new Promise((resolve) => {
      this.proc.on('exit', (code, signal) => {
        this.exited = true;
        this.exitCode = code ?? signal;
        resolve(this.exitCode);
      });
      this.proc.on('error', (error) => {
        this.exited = true;
        this.exitCode = `spawn error: ${error.message}`;
        resolve(this.exitCode);
      });
    });
    this.exitPromise.then(() => this.emitLines());
  }

  describe() {
    return `${path.basename(this.program)} ${this.args.join(' ')}`;
  }

  emitLines() {
    const firstLine = this.stdout.includes('\n') ? this.stdout.slice(0, this.stdout.indexOf('\n')) : null;
    for (const waiter of this.lineWaiters.splice(0)) {
      if (firstLine !== null) waiter.resolve(firstLine.trim());
      else if (this.exited) waiter.reject(new Error(`${this.describe()} exited (${this.exitCode}) before printing a line:\n${tail(this.stderr)}`));
      else this.lineWaiters.push(waiter);
    }
  }

  // The first line of stdout, within `timeoutMs`.
  firstLine(timeoutMs = START_TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(
        `${this.describe()} printed no line within ${timeoutMs} ms:\n${tail(this.stderr)}`)), timeoutMs);
      this.lineWaiters.push({
        resolve: (line) => { clearTimeout(timer); resolve(line); },
        reject: (error) => { clearTimeout(timer); reject(error); },
      });
      this.emitLines();
    });
  }

  async waitExit(timeoutMs) {
    let timer;
    const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), timeoutMs); });
    const result = await Promise.race([this.exitPromise, timeout]);
    clearTimeout(timer);
    return result;
  }

  // SIGTERM, then SIGKILL if it has not exited within 5 s. Only this child, by its pid.
  async stop() {
    if (this.exited) return;
    this.proc.kill('SIGTERM');
    if (await this.waitExit(5000) === 'timeout') {
      this.proc.kill('SIGKILL');
      await this.waitExit(5000);
    }
  }
}

async function fetchJson(url) {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

// Asks `base + pathAndQuery` every 100 ms until `pick(json)` answers something other than null or
// undefined, and answers that; an error answer counts as "not yet" (the store is created with the
// first spans). Rejects after `timeoutMs`, or once `server` (the Child serving `base`) has exited.
export async function waitForApi(base, pathAndQuery, pick, { what, server, timeoutMs = TRACE_APPEAR_TIMEOUT_MS }) {
  const deadline = Date.now() + timeoutMs;
  let last = null;
  for (;;) {
    try {
      last = await fetchJson(base + pathAndQuery);
      const picked = pick(last);
      if (picked !== null && picked !== undefined) return picked;
    } catch (error) {
      last = error.message;
    }
    if (server.exited) throw new Error(`${server.describe()} exited (${server.exitCode}):\n${tail(server.stderr)}`);
    if (Date.now() > deadline) {
      throw new Error(`${what}: not in ${pathAndQuery} within ${timeoutMs} ms: ${JSON.stringify(last).slice(0, 2000)}\n${tail(server.stderr)}`);
    }
    await new Promise((resolve) => { setTimeout(resolve, 100); });  // polling an API, not synchronising
  }
}

// Collects what has to be stopped or removed, and does it in reverse order in close().
export class Harness {
  constructor() {
    this.cleanups = [];
  }

  defer(fn) {
    this.cleanups.push(fn);
  }

  tempDir(prefix) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    this.defer(() => fs.rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  spawn(args, options) {
    const child = new Child(args, options);
    this.defer(() => child.stop());
    return child;
  }

  async close() {
    const errors = [];
    for (const fn of this.cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length) throw errors[0];
  }

  // `sparktrace ui --store STORE --listen 127.0.0.1:0`: its base URL ("http://127.0.0.1:PORT").
  async startUi(store) {
    const ui = this.spawn(['ui', '--store', store, '--listen', '127.0.0.1:0']);
    const line = await ui.firstLine();
    const match = UI_RE.exec(line);
    if (!match) throw new Error(`unexpected first line of ${ui.describe()}: ${JSON.stringify(line)}\n${tail(ui.stderr)}`);
    return match[1];
  }

  // A fresh PostgreSQL server and database: the database's URL (a unix socket; trust auth).
  async startPostgres() {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'sparktrace-browser-pg-'));
    fs.chmodSync(parent, 0o755);  // the cluster's user (postgres, when the tests run as root) must get through
    const dir = path.join(parent, 'cluster');
    const script = path.join(ROOT, 'tests', 'support', 'postgres_server.py');
    const run = async (action) => {
      const child = new Child([script, action, dir], { program: '/usr/bin/python3' });
      const code = await child.waitExit(PG_TIMEOUT_MS);
      // Left running, its pipes would keep this process from ever exiting.
      if (code === 'timeout') await child.stop();
      if (code !== 0) throw new Error(`postgres_server.py ${action} ended with ${code}:\n${tail(child.stderr)}`);
      return child.stdout.trim();
    };
    this.defer(async () => {
      await run('stop');
      fs.rmSync(path.dirname(dir), { recursive: true, force: true });
    });
    // postgresql://sparktrace@/postgres?host=DIR&sslmode=disable: the fresh cluster's own database
    // is the demo's.
    return run('start');
  }

  // The demo's Airflow task attempt served by `sparktrace ui`: {base, pagePath, store}. With
  // `postgres`, the proxy and the ui use a PostgreSQL store instead of the SQLite file.
  async startDemo({ postgres = false } = {}) {
    const dir = this.tempDir('sparktrace-browser-demo-');
    const storeArgs = postgres ? ['--store', await this.startPostgres()] : [];
    const demo = this.spawn(['demo', '--once', '--listen', '127.0.0.1:0', ...storeArgs], { cwd: dir });
    const code = await demo.waitExit(DEMO_TIMEOUT_MS);
    if (code !== 0) {
      throw new Error(`${demo.describe()} ended with ${code}:\n${tail(demo.stdout)}\n${tail(demo.stderr)}`);
    }
    const match = OPEN_RE.exec(demo.stdout);
    if (!match) throw new Error(`the demo printed no trace view URL:\n${tail(demo.stdout)}`);
    const store = postgres ? storeArgs[1] : path.join(dir, 'sparktrace-demo.db');
    const base = await this.startUi(store);
    return { base, pagePath: match[1], store };
  }

  // The proxy following a copy of the real event log; its admin port serves the trace view.
  // Answers {base, href, traceId, row} once /api/v1/tasks lists the application's trace.
  // `log`: a rolling eventlog_v2_* directory (followed as it is) or a single log file (followed in a
  // directory of its own).
  async startRealLogProxy(log = REAL_LOG) {
    const dir = this.tempDir('sparktrace-browser-real-');
    let logDir;
    if (fs.statSync(log).isDirectory()) {
      logDir = path.join(dir, path.basename(log));
      fs.cpSync(log, logDir, { recursive: true });
    } else {
      logDir = path.join(dir, 'event-logs');
      fs.mkdirSync(logDir);
      fs.copyFileSync(log, path.join(logDir, path.basename(log)));
    }
    for (const name of fs.readdirSync(logDir)) fs.chmodSync(path.join(logDir, name), 0o644);
    const proxy = this.spawn([
      'proxy', '--upstream', '127.0.0.1:9', '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0',
      '--store', path.join(dir, 'real.db'), '--event-log-dir', logDir, '--event-log-poll', '200ms',
      // The log is from June 2025: the default age limit (7d) would delete its trace at once.
      '--store-max-age', '20000d',
      '--drain-timeout', '2s', '--log-level', 'warn',
    ], { cwd: dir });
    const line = await proxy.firstLine();
    const match = LISTENING_RE.exec(line);
    if (!match) throw new Error(`unexpected first line of ${proxy.describe()}: ${JSON.stringify(line)}\n${tail(proxy.stderr)}`);
    const base = `http://${match[2]}`;
    const deadline = Date.now() + TRACE_APPEAR_TIMEOUT_MS;
    let last = null;
    for (;;) {
      last = await fetchJson(`${base}/api/v1/tasks`);
      const row = last.tasks.find((t) => t.kind === 'trace');
      if (row) return { base, href: row.href, traceId: row.trace_ids[0], row };
      if (proxy.exited) throw new Error(`the proxy exited (${proxy.exitCode}):\n${tail(proxy.stderr)}`);
      if (Date.now() > deadline) {
        throw new Error(`no trace row in /api/v1/tasks within ${TRACE_APPEAR_TIMEOUT_MS} ms: ${JSON.stringify(last)}\n${tail(proxy.stderr)}`);
      }
      await new Promise((resolve) => { setTimeout(resolve, 100); });  // polling an API, not synchronising
    }
  }

  // `sparktrace proxy --store` in front of `sparktrace sim`, each with `simArgs` / `proxyArgs` added:
  // {grpc: the proxy's Spark Connect address, base: its admin (trace view) URL, proxy: its process}.
  async startSimAndProxy({ simArgs = [], proxyArgs = [] } = {}) {
    const dir = this.tempDir('sparktrace-browser-sim-');
    const sim = this.spawn(['sim', '--listen', '127.0.0.1:0', ...simArgs], { cwd: dir });
    const simLine = await sim.firstLine();
    const simMatch = SIM_RE.exec(simLine);
    if (!simMatch) throw new Error(`unexpected first line of ${sim.describe()}: ${JSON.stringify(simLine)}\n${tail(sim.stderr)}`);
    const proxy = this.spawn([
      'proxy', '--upstream', simMatch[1], '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0',
      '--store', path.join(dir, 'traces.db'), '--span-batch-delay', '50ms', '--drain-timeout', '2s', '--log-level', 'warn',
      ...proxyArgs,
    ], { cwd: dir });
    const line = await proxy.firstLine();
    const match = LISTENING_RE.exec(line);
    if (!match) throw new Error(`unexpected first line of ${proxy.describe()}: ${JSON.stringify(line)}\n${tail(proxy.stderr)}`);
    return { grpc: match[1], base: `http://${match[2]}`, proxy };
  }

  // `sparktrace proxy --store` in front of `sparktrace sim`; each of `attempts` ({dag_id, task_id,
  // run_id, try_number, map_index}) makes one ExecutePlan call through it with its identity. Answers
  // {base, rows} once /api/v1/tasks lists an Airflow row for every attempt.
  async startSimProxy(attempts) {
    const { grpc, base, proxy } = await this.startSimAndProxy();
    for (const identity of attempts) await executePlan(grpc, identity);
    const rows = await waitForApi(base, '/api/v1/tasks?limit=200', (tasks) => {
      const airflow = tasks.tasks.filter((t) => t.kind === 'airflow');
      return airflow.length === attempts.length ? airflow : null;
    }, { what: `${attempts.length} attempts`, server: proxy });
    return { base, rows };
  }

  async launchBrowser() {
    const browser = await chromium.launch({
      executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: START_TIMEOUT_MS,
      // The same locale and zone everywhere, so that dates and numbers on screenshots compare.
      env: { ...process.env, LANG: 'en_US.UTF-8', TZ: 'UTC' },
    });
    this.defer(() => browser.close());
    return browser;
  }
}

// --- one Spark Connect call, gRPC over node:http2 (proto/spark/connect/base.proto field numbers) --------
function varint(n) {
  const out = [];
  let v = n;
  do {
    let byte = v & 0x7f;
    v = Math.floor(v / 128);
    if (v) byte |= 0x80;
    out.push(byte);
  } while (v);
  return Buffer.from(out);
}
const bytesField = (num, payload) => Buffer.concat([varint((num << 3) | 2), varint(payload.length), payload]);
const stringField = (num, text) => bytesField(num, Buffer.from(text, 'utf8'));

// ExecutePlanRequest{session_id=1, user_context=2{user_id=1}, plan=3{root=1{sql=10{query=1}}},
// client_type=4, operation_id=6}: not reattachable, so the operation ends with its stream.
function executePlanRequest(clientType) {
  const plan = bytesField(1, bytesField(10, stringField(1, 'SELECT 1')));
  return Buffer.concat([stringField(1, randomUUID()), bytesField(2, stringField(1, 'browser-test')), bytesField(3, plan),
    stringField(4, clientType), stringField(6, randomUUID())]);
}

// The x-airflow-* metadata of an identity (docs/tracing.md); an empty run id is not sent.
function airflowHeaders({ dag_id, task_id, run_id, try_number, map_index }) {
  const headers = { 'x-airflow-dag-id': dag_id, 'x-airflow-task-id': task_id, 'x-airflow-try-number': String(try_number) };
  if (run_id) headers['x-airflow-run-id'] = run_id;
  if (map_index !== -1) headers['x-airflow-map-index'] = String(map_index);
  return headers;
}

// Runs one ExecutePlan through `grpcAddress` to its end; rejects unless grpc-status is 0. `clientType`
// is the request's client_type (the sim streams Spark 4's execution_progress to a "spark/4…" one);
// `metadata` is added to the call's headers (the sim's x-sim-* shape of the operation).
export async function executePlan(grpcAddress, identity, { clientType = 'sparktrace-browser-test', metadata = {} } = {}) {
  const session = http2.connect(`http://${grpcAddress}`);
  session.on('error', () => {});  // reported through the stream below
  try {
    const stream = session.request({
      ':method': 'POST', ':path': '/spark.connect.SparkConnectService/ExecutePlan',
      'content-type': 'application/grpc', te: 'trailers', ...airflowHeaders(identity), ...metadata,
    });
    const message = executePlanRequest(clientType);
    const frame = Buffer.alloc(5);
    frame.writeUInt32BE(message.length, 1);
    stream.end(Buffer.concat([frame, message]));
    let status = null;
    stream.on('response', (headers) => { status = headers['grpc-status'] ?? status; });  // trailers-only
    stream.on('trailers', (trailers) => { status = trailers['grpc-status'] ?? status; });
    stream.resume();  // the sim's batches: not needed here
    stream.setTimeout(CALL_TIMEOUT_MS, () => stream.close(http2.constants.NGHTTP2_CANCEL));
    await new Promise((resolve, reject) => {
      stream.on('close', resolve);
      stream.on('error', reject);
    });
    if (status !== '0') throw new Error(`ExecutePlan for ${JSON.stringify(identity)} ended with grpc-status ${status}`);
  } finally {
    session.close();
  }
}

export function getJson(base, pathAndQuery) {
  return fetchJson(base + pathAndQuery);
}

// The attempt (or trace) JSON behind a page address, as the page asks for it: "/attempt?…" ->
// "/api/v1/attempt?…", "/traces/<id>" -> "/api/v1/traces/<id>", the earlier "/tasks/…" -> "/api/v1/tasks/…".
export function apiPathOf(pagePath) {
  const url = new URL(pagePath, 'http://x');
  if (url.pathname === '/attempt') return `/api/v1/attempt${url.search}`;
  return `/api/v1${url.pathname}${url.searchParams.has('map_index') ? `?map_index=${url.searchParams.get('map_index')}` : ''}`;
}

// Opt-in, for work on the page: SPARKTRACE_WEB_ASSETS=DIR (e.g. web/assets) answers the page's
// document and /assets/* from that directory instead of the copy embedded in the binary, keeping
// the binary's status and headers (its CSP included), so page edits can be tested without a
// rebuild. Unset (the default, and in CTest), the binary's own page is what is tested.
const WEB_ASSETS = process.env.SPARKTRACE_WEB_ASSETS ? path.resolve(process.env.SPARKTRACE_WEB_ASSETS) : null;
const ASSET_TYPES = {
  '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
};

async function serveAssetsFromDisk(context) {
  await context.route(/^http:\/\/127\.0\.0\.1:\d+\//, (route) => answerFromDisk(route).catch(() => {
    // The context closed while a request was in flight: nothing is waiting for it any more.
  }));
}

// route.fetch() asks the server from node, without the browser's six connections per host: all the
// modules the document preloads at once would overflow the admin port's trace-view queue
// (--admin-ui-queue, 16) and get 503. A few at a time, as a browser would.
const FETCH_SLOTS = 4;
let fetchesRunning = 0;
const fetchWaiters = [];

async function fetchLimited(route) {
  while (fetchesRunning >= FETCH_SLOTS) await new Promise((resolve) => { fetchWaiters.push(resolve); });
  fetchesRunning += 1;
  try {
    return await route.fetch();
  } finally {
    fetchesRunning -= 1;
    fetchWaiters.shift()?.();
  }
}

async function answerFromDisk(route) {
  const request = route.request();
  const url = new URL(request.url());
  const isDocument = request.isNavigationRequest() && !url.pathname.startsWith('/api/');
  if (!isDocument && !url.pathname.startsWith('/assets/')) return route.continue();
  const file = isDocument ? path.join(WEB_ASSETS, 'index.html') : path.join(WEB_ASSETS, url.pathname.slice('/assets/'.length));
  if (!file.startsWith(WEB_ASSETS + path.sep) || !fs.existsSync(file)) return route.continue();
  const response = await fetchLimited(route);
  const headers = { ...response.headers(), 'content-type': ASSET_TYPES[path.extname(file)] ?? 'application/octet-stream' };
  for (const name of ['content-encoding', 'content-length', 'etag']) delete headers[name];
  return route.fulfill({ status: response.status(), headers, body: fs.readFileSync(file) });
}

const records = new WeakMap();  // page -> what openPage records of it

// A fresh context and page, 1440x900, with everything it does recorded:
// {context, page, requests: [url], consoleErrors: [text], pageErrors: [text], cspViolations: [{...}]}.
// bypassCSP stays false unless asked: the page must work under its own policy.
export async function openPage(browser, { colorScheme = 'light', bypassCSP = false } = {}) {
  const context = await browser.newContext({
    viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1, colorScheme, bypassCSP,
    locale: 'en-US', timezoneId: 'UTC', reducedMotion: 'reduce',
  });
  context.setDefaultTimeout(PAGE_TIMEOUT_MS);
  context.setDefaultNavigationTimeout(PAGE_TIMEOUT_MS);
  const record = { context, requests: [], consoleErrors: [], pageErrors: [], cspViolations: [] };
  // A binding (not a page script) so that the report itself is not subject to the policy.
  await context.exposeBinding('__sparktraceCspViolation', (_source, violation) => {
    record.cspViolations.push(violation);
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      window.__sparktraceCspViolation({
        directive: event.effectiveDirective, blocked: event.blockedURI, source: event.sourceFile,
        line: event.lineNumber, sample: event.sample,
      });
    });
  });
  if (WEB_ASSETS) await serveAssetsFromDisk(context);
  const page = await context.newPage();
  records.set(page, record);
  page.on('request', (request) => record.requests.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error') record.consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => record.pageErrors.push(String(error)));
  record.page = page;
  return record;
}

// Loads `url` and waits until the page says its data is on screen.
export async function load(page, url) {
  const response = await page.goto(url, { waitUntil: 'domcontentloaded' });
  await waitReady(page);
  return response;
}

// Waits for document.body.dataset.ready; when it never comes, says what the page logged.
export async function waitReady(page) {
  try {
    await page.waitForSelector('body[data-ready="1"]', { state: 'attached' });
  } catch (error) {
    const record = records.get(page);
    const main = await page.textContent('#main').catch(() => '(unreadable)');
    throw new Error(`${page.url()} never became ready: ${error.message.split('\n')[0]}\n`
      + `page errors: ${JSON.stringify(record?.pageErrors ?? [])}\nconsole errors: ${JSON.stringify(record?.consoleErrors ?? [])}\n`
      + `CSP violations: ${JSON.stringify(record?.cspViolations ?? [])}\n#main: ${String(main).trim().slice(0, 500)}`);
  }
}

// The URL's path + query as the page shows it now.
export function currentPath(page) {
  const url = new URL(page.url());
  return url.pathname + url.search;
}

export function artifactsDir() {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return ARTIFACTS;
}
