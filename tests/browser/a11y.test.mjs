// Accessibility (axe-core: no violation of impact serious or critical) and full-page screenshots
// (1440x900) of the task list, the demo's attempt page and the real-log trace page, in the light and
// the dark colour scheme. Screenshots go to $SPARKTRACE_ARTIFACTS (default: the OS temp dir's
// sparktrace-browser-artifacts/); the path is printed.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Harness, REAL_LOG, artifactsDir, load, openPage } from './harness.mjs';
import { assertNoCspViolations, assertNoErrors, assertSameOrigin, seriousAxeViolations, waitGantt } from './checks.mjs';

const harness = new Harness();
const haveRealLog = fs.existsSync(REAL_LOG);
let demo;
let real;
let browser;
let dir;

before(async () => {
  demo = await harness.startDemo();
  if (haveRealLog) real = await harness.startRealLogProxy();
  browser = await harness.launchBrowser();
  dir = artifactsDir();
  console.log(`sparktrace browser screenshots: ${dir}`);
}, { timeout: 200_000 });

after(() => harness.close(), { timeout: 60_000 });

// The relative luminance of a computed CSS colour ("rgb(r, g, b)").
function luminance(color) {
  const [r, g, b] = color.match(/[\d.]+/g).slice(0, 3).map((v) => {
    const c = Number(v) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

const PAGES = [
  { name: 'tasks', url: () => `${demo.base}/`, ready: (page) => page.waitForSelector('table#tasks tr[data-href]') },
  { name: 'attempt', url: () => demo.base + demo.pagePath, ready: waitGantt },
  { name: 'trace-real-log', url: () => real.base + real.href, ready: waitGantt, needsRealLog: true },
];

for (const { name, url, ready, needsRealLog } of PAGES) {
  for (const colorScheme of ['light', 'dark']) {
    const skip = needsRealLog && !haveRealLog ? `no event log ${REAL_LOG} (set SPARKTRACE_DATA_DIR)` : false;
    test(`${name} page, ${colorScheme}: no serious or critical axe violation; screenshot`, { timeout: 90_000, skip }, async (t) => {
      const record = await openPage(browser, { colorScheme });
      t.after(() => record.context.close());
      const { page } = record;
      await load(page, url());
      await ready(page);

      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      if (colorScheme === 'dark') assert.ok(luminance(background) < 0.1, `a dark background in dark mode (${background})`);
      else assert.ok(luminance(background) > 0.7, `a light background in light mode (${background})`);

      const file = path.join(dir, `${name}-${colorScheme}.png`);
      await page.screenshot({ path: file, fullPage: true });
      t.diagnostic(`screenshot ${file}`);

      const violations = await seriousAxeViolations(page);
      assert.deepEqual(violations, [], `axe-core on ${name} (${colorScheme}):\n${JSON.stringify(violations, null, 2)}`);
      assertNoCspViolations(record);
      assertNoErrors(record);
      assertSameOrigin(record.requests, new URL(url()).origin);
    });
  }
}
