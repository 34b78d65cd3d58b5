// index.html preloads every module of the page (so the browser fetches them in parallel instead of
// discovering them import by import) and names no asset that does not exist.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const assets = join(dirname(fileURLToPath(import.meta.url)), '..', 'assets');
const html = readFileSync(join(assets, 'index.html'), 'utf8');

test('every module but the entry point is preloaded, and nothing else', () => {
  const modules = readdirSync(assets).filter((f) => f.endsWith('.js') && f !== 'app.js').sort();
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="\/assets\/([^"]+)">/g)].map((m) => m[1]).sort();
  assert.deepEqual(preloaded, modules);
});

test('every asset the document names exists, and no script is inline', () => {
  for (const [, name] of html.matchAll(/(?:src|href)="\/assets\/([^"]+)"/g)) {
    assert.ok(readdirSync(assets).includes(name), `${name} is named by index.html but missing`);
  }
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'inline script');
  assert.doesNotMatch(html, /\sstyle=/, 'inline style');
});
