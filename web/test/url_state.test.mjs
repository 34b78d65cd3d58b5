import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseRoute, attemptPath, attemptPageUrl, attemptApiUrl, tasksPageUrl, tasksApiUrl,
  recipePageUrl, recipeApiUrl, resolveRecipeLink, safeHref, tracePath,
} from '../assets/url_state.js';

function split(url) {
  const at = url.indexOf('?');
  return at < 0 ? [url, ''] : [url.slice(0, at), url.slice(at)];
}

const RUN_IDS = [
  'manual__2026-11-25T06:00',
  'scheduled__2026-11-25T06:00:00+00:00',
  'backfill/with/slashes',
  '100% done',
  'run #1 ? & = +',
  'ünïcødé-運行-🚀',
];

test('attempt paths round-trip awkward run ids', () => {
  for (const run_id of RUN_IDS) {
    for (const map_index of [-1, 0, 7]) {
      const identity = { dag_id: 'etl/daily', task_id: 'load+merge', run_id, try_number: 2, map_index };
      const [path, search] = split(attemptPath(identity));
      const route = parseRoute(path, search);
      assert.equal(route.page, 'attempt', run_id);
      assert.deepEqual(route.identity, identity);
    }
  }
});

test('the api path mirrors the page path, map index only when set', () => {
  const identity = { dag_id: 'etl', task_id: 'load', run_id: 'scheduled__2026-11-25T06:00:00+00:00', try_number: 1, map_index: -1 };
  assert.equal(attemptPath(identity), '/tasks/etl/load/scheduled__2026-11-25T06%3A00%3A00%2B00%3A00/1');
  const route = { kind: 'airflow', identity };
  assert.equal(attemptApiUrl(route), '/api/v1/tasks/etl/load/scheduled__2026-11-25T06%3A00%3A00%2B00%3A00/1');
  assert.equal(attemptApiUrl({ kind: 'airflow', identity: { ...identity, map_index: 3 } }),
    '/api/v1/tasks/etl/load/scheduled__2026-11-25T06%3A00%3A00%2B00%3A00/1?map_index=3');
  assert.equal(attemptApiUrl({ kind: 'trace', traceId: 'abc' }), '/api/v1/traces/abc');
});

test('the view (span, zoom, search) round-trips through the query', () => {
  const identity = { dag_id: 'etl', task_id: 'load', run_id: 'r+1', try_number: 1, map_index: 4 };
  const view = { span: '00f067aa0ba902b7', from: 1234.5678, to: 98765, find: 'stage 3 + "x" & y%' };
  const url = attemptPageUrl({ kind: 'airflow', identity }, view);
  const [path, search] = split(url);
  const route = parseRoute(path, search);
  assert.deepEqual(route.identity, identity);
  assert.deepEqual(route.view, { ...view, from: 1234.568 });
  const trace = parseRoute(...split(attemptPageUrl({ kind: 'trace', traceId: '4bf9' }, { span: null, from: null, to: null, find: 'ü' })));
  assert.deepEqual(trace, { page: 'attempt', kind: 'trace', traceId: '4bf9', view: { span: null, from: null, to: null, find: 'ü' } });
});

test('a zoom window that is empty or reversed is dropped', () => {
  const route = parseRoute('/traces/x', '?from=50&to=10');
  assert.equal(route.view.from, null);
  assert.equal(route.view.to, null);
  assert.equal(parseRoute('/traces/x', '?from=a&to=10').view.from, null);
});

test('unknown and malformed paths', () => {
  assert.equal(parseRoute('/tasks/a/b/c').page, 'unknown');
  assert.equal(parseRoute('/tasks/a/b/c/x').page, 'unknown');
  assert.equal(parseRoute('/tasks/a/b/c/1', '?map_index=x').page, 'unknown');
  assert.equal(parseRoute('/tasks/a/b/%E0%A4%A/1').page, 'unknown');
  assert.equal(parseRoute('/nope').page, 'unknown');
  assert.equal(parseRoute('/recipes/../secret.md').page, 'unknown');
  assert.equal(parseRoute('/recipes/troubleshoot/x.txt').page, 'unknown');
});

test('task list filters round-trip and paging', () => {
  const query = { dag: 'etl daily', task: 'a+b', state: 'failed', since: '1764050400000', q: '4bf9/x', offset: 100 };
  const [path, search] = split(tasksPageUrl(query));
  assert.equal(path, '/');
  assert.deepEqual(parseRoute(path, search), { page: 'tasks', query });
  assert.deepEqual(parseRoute('/', '?state=bogus&offset=-5&since=abc'), { page: 'tasks', query: { offset: 0 } });
  assert.equal(tasksApiUrl({ offset: 0 }), '/api/v1/tasks?limit=50&offset=0');
  assert.equal(tasksApiUrl({ dag: 'etl', offset: 50 }, 20), '/api/v1/tasks?dag=etl&offset=50&limit=20');
});

test('recipe urls and links between recipes', () => {
  assert.deepEqual(parseRoute('/recipes/troubleshoot/gc-pressure.md'), { page: 'recipe', path: 'troubleshoot/gc-pressure.md' });
  assert.equal(recipePageUrl('troubleshoot/gc-pressure.md'), '/recipes/troubleshoot/gc-pressure.md');
  assert.equal(recipeApiUrl('a b/c.md'), '/api/v1/recipes/a%20b/c.md');
  const from = 'troubleshoot/resource-wait-long.md';
  assert.deepEqual(resolveRecipeLink(from, 'slow-spark-jobs.md#idle-executors'),
    { kind: 'recipe', href: '/recipes/troubleshoot/slow-spark-jobs.md#idle-executors' });
  assert.deepEqual(resolveRecipeLink(from, '../observability/sparktrace-proxy.md'),
    { kind: 'recipe', href: '/recipes/observability/sparktrace-proxy.md' });
  assert.deepEqual(resolveRecipeLink('README.md', 'troubleshoot/x.md'), { kind: 'recipe', href: '/recipes/troubleshoot/x.md' });
  assert.equal(resolveRecipeLink(from, '../../docs/tracing.md'), null);
  assert.equal(resolveRecipeLink('README.md', '../tracing.md'), null);
  assert.equal(resolveRecipeLink(from, 'javascript:alert(1)'), null);
  assert.equal(resolveRecipeLink(from, '/etc/passwd'), null);
  assert.deepEqual(resolveRecipeLink(from, '#causes'), { kind: 'anchor', href: '#causes' });
  assert.deepEqual(resolveRecipeLink(from, 'https://spark.apache.org/docs'), { kind: 'external', href: 'https://spark.apache.org/docs' });
});

test('only relative paths and http(s) links are followed', () => {
  assert.equal(safeHref('/tasks/a/b/c/1'), '/tasks/a/b/c/1');
  assert.equal(safeHref('http://driver:4040/jobs/'), 'http://driver:4040/jobs/');
  assert.equal(safeHref('javascript:alert(1)'), null);
  assert.equal(safeHref('JaVaScRiPt:alert(1)'), null);
  assert.equal(safeHref('data:text/html,x'), null);
  assert.equal(safeHref('//evil.example/x'), null);
  assert.equal(safeHref('/\t/evil.example'), null);
  assert.equal(safeHref('/\\evil.example'), null);
  assert.equal(safeHref('relative/path'), null);
  assert.equal(safeHref(null), null);
  assert.equal(tracePath('a/b'), '/traces/a%2Fb');
});
