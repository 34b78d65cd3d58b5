// Dev-only static server for looking at the trace view without the C++ server:
//   node web/dev/fixture_server.mjs [--port N]      (loopback, port 0 = any free port; prints its URL)
// Serves web/assets at /assets/*, index.html for every page path, the fixtures at the API paths
// (with ETag / 304 and the production Content-Security-Policy), and docs/recipes at
// /api/v1/recipes/*. Special paths for checking the page's states:
//   /attempt?dag=big_dag&task=many_stages&run=scheduled__2026-11-25T00%3A00%3A00%2B00%3A00&try=1   20,000 spans
//   any attempt of dag "ml_features" task "build_features" map 3: running, grows on every poll
//   ?token=... answers 303 without it (and a cookie); an API path with dag "needs_token" answers 401;
//   dag "store_busy" answers 503.

import { createServer } from 'node:http';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { extname, join, normalize } from 'node:path';
import { assembleAttempt, attemptHref } from '../test/fixtures/build_attempt.mjs';
import { runningScenario } from '../test/fixtures/scenarios.mjs';
import { namedAttempts, allAttempts, tasksPage } from '../test/fixtures/make_fixtures.mjs';
import { attemptPath, parseRoute } from '../assets/url_state.js';
import { buildLargeAttempt, LARGE_IDENTITY } from '../test/fixtures/make_large_attempt.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ASSETS = join(ROOT, 'assets');
const RECIPES = join(ROOT, '..', 'docs', 'recipes');
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.json': 'application/json; charset=utf-8', '.md': 'text/markdown; charset=utf-8',
};

const started = Date.now();
const named = namedAttempts();
const attempts = allAttempts(named);
const large = buildLargeAttempt();
attempts.push(large);
attempts.sort((a, b) => b.start_ms - a.start_ms);
const byHref = new Map(attempts.map((a) => [a.kind === 'trace' ? `/traces/${a.trace_ids[0]}` : attemptHref(a.identity), a]));

function send(res, status, type, body, extra = {}) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff', ...extra });
  res.end(body);
}

// JSON with an ETag; a matching If-None-Match gets 304.
const bodies = new WeakMap();  // serialised once: the 20,000-span attempt is 30 MB of JSON

function sendJson(req, res, value) {
  if (!bodies.has(value)) bodies.set(value, JSON.stringify(value));
  const body = bodies.get(value);
  const etag = `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`;
  if (req.headers['if-none-match'] === etag) return send(res, 304, 'application/json', '', { ETag: etag });
  return send(res, 200, TYPES['.json'], body, { ETag: etag, 'Cache-Control': 'no-cache' });
}

function apiError(res, status, message) {
  send(res, status, TYPES['.json'], JSON.stringify({ error: message }));
}

function filterTasks(params) {
  const since = Number(params.get('since') ?? -Infinity);
  const until = Number(params.get('until') ?? Infinity);
  const q = params.get('q');
  return attempts.filter((a) => (!params.get('dag') || a.identity?.dag_id === params.get('dag'))
    && (!params.get('task') || a.identity?.task_id === params.get('task'))
    && (!params.get('state') || a.state === params.get('state'))
    && a.start_ms >= since && a.start_ms <= until
    && (!q || a.trace_ids.includes(q) || a.spans.some((s) => s.attributes['spark.connect.operation_id'] === q || s.attributes['spark.app.id'] === q)));
}

// The running attempt grows with the server's uptime, so that polling shows change.
function runningAttempt() {
  const elapsed = 1800 + Math.floor((Date.now() - started) / 2000) * 2;
  return assembleAttempt(runningScenario(elapsed, Date.UTC(2026, 10, 25, 9, 13, 0) + elapsed * 1000));
}

// The attempt an API path names (/attempt?…, the earlier /tasks/<dag>/…, or /traces/<id>), by the
// page's own router.
function attemptFor(pagePath, search) {
  const route = parseRoute(pagePath, search);
  if (route.page !== 'attempt') return undefined;
  const attempt = byHref.get(route.kind === 'trace' ? `/traces/${route.traceId}` : attemptPath(route.identity));
  if (attempt?.identity?.dag_id === 'ml_features' && attempt.identity.map_index === 3) return runningAttempt();
  return attempt;
}

async function serveApi(req, res, url) {
  const path = url.pathname.slice('/api/v1'.length);
  if ((path + url.search).includes('needs_token')) return apiError(res, 401, 'token required');
  if ((path + url.search).includes('store_busy')) return apiError(res, 503, 'store busy');
  if (path === '/tasks') {
    const list = filterTasks(url.searchParams);
    const offset = Math.max(Number(url.searchParams.get('offset') ?? 0), 0);
    const limit = Math.min(Math.max(Number(url.searchParams.get('limit') ?? 50), 1), 200);
    return sendJson(req, res, tasksPage(list, offset, limit));
  }
  if (path.startsWith('/recipes/')) {
    const file = normalize(join(RECIPES, decodeURIComponent(path.slice('/recipes/'.length))));
    if (!file.startsWith(RECIPES) || !file.endsWith('.md')) return apiError(res, 404, 'no such recipe');
    try {
      return send(res, 200, TYPES['.md'], await readFile(file));
    } catch {
      return apiError(res, 404, 'no such recipe');
    }
  }
  const download = /\/(chrome-trace|otlp)\.json$/.exec(path);
  const pagePath = download ? path.slice(0, download.index) : path;
  const attempt = attemptFor(pagePath, url.search);
  if (!attempt) return apiError(res, 404, pagePath.startsWith('/traces/') ? 'no such trace' : 'no such task attempt');
  if (download) {
    const body = download[1] === 'otlp' ? { resourceSpans: [] } : { traceEvents: [], displayTimeUnit: 'ms' };
    return send(res, 200, TYPES['.json'], JSON.stringify(body), { 'Content-Disposition': `attachment; filename="${download[1]}.json"` });
  }
  return sendJson(req, res, attempt);
}

async function serveAsset(res, pathname) {
  const file = normalize(join(ASSETS, decodeURIComponent(pathname.slice('/assets/'.length))));
  if (!file.startsWith(ASSETS)) return send(res, 404, 'text/plain', 'not found');
  try {
    return send(res, 200, TYPES[extname(file)] ?? 'application/octet-stream', await readFile(file), { 'Cache-Control': 'no-cache' });
  } catch {
    return send(res, 404, 'text/plain', 'not found');
  }
}

const server = createServer(async (req, res) => {
  try {
    const url = new URL(req.url, 'http://localhost');
    if (url.searchParams.has('token')) {
      url.searchParams.delete('token');
      res.writeHead(303, { Location: url.pathname + url.search, 'Set-Cookie': 'sparktrace_token=dev; HttpOnly; SameSite=Strict; Path=/' });
      return res.end();
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return apiError(res, 405, 'method not allowed');
    if (url.pathname.startsWith('/api/v1/')) return await serveApi(req, res, url);
    if (url.pathname.startsWith('/assets/')) return await serveAsset(res, url.pathname);
    if (url.pathname === '/favicon.ico') return send(res, 404, 'text/plain', 'not found');
    return send(res, 200, TYPES['.html'], await readFile(join(ASSETS, 'index.html')));
  } catch (error) {
    console.error(error);
    if (!res.headersSent) apiError(res, 500, 'fixture server error');
  }
});

const portArg = process.argv.indexOf('--port');
server.listen(portArg > 0 ? Number(process.argv[portArg + 1]) : 0, '127.0.0.1', () => {
  const { port } = server.address();
  console.log(`http://127.0.0.1:${port}/`);
  console.log(`big attempt: http://127.0.0.1:${port}${attemptHref(LARGE_IDENTITY)}`);
});
