// Dev-only: drives a headless Chromium over the DevTools protocol (no npm package: Node's
// WebSocket, `node --experimental-websocket` on Node 20). Used by browser_check.mjs.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function launch({ width = 1440, height = 900, dark = false } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'st-chrome-'));
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', `--user-data-dir=${profile}`, `--window-size=${width},${height}`,
    '--remote-debugging-port=0', '--hide-scrollbars', 'about:blank'];
  if (dark) args.push('--force-dark-mode');
  const proc = spawn('chromium', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const wsUrl = await new Promise((resolve, reject) => {
    let buffer = '';
    proc.stderr.on('data', (chunk) => {
      buffer += chunk;
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(buffer);
      if (match) resolve(match[1]);
    });
    proc.on('exit', () => reject(new Error(`chromium exited: ${buffer.slice(-500)}`)));
  });
  const port = new URL(wsUrl).port;
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const page = targets.find((t) => t.type === 'page');
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((resolve) => ws.addEventListener('open', resolve, { once: true }));
  let id = 0;
  const pending = new Map();
  const listeners = [];
  ws.addEventListener('message', (event) => {
    const msg = JSON.parse(event.data);
    if (msg.id && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(msg.error.message));
      else resolve(msg.result);
    } else if (msg.method) {
      for (const fn of listeners) fn(msg);
    }
  });
  const send = (method, params = {}) => new Promise((resolve, reject) => {
    id += 1;
    pending.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, method, params }));
  });
  await send('Page.enable');
  await send('Runtime.enable');
  await send('Log.enable');
  await send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
  if (dark) await send('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-color-scheme', value: 'dark' }] });
  const messages = [];
  listeners.push((msg) => {
    if (msg.method === 'Runtime.consoleAPICalled') messages.push(`console.${msg.params.type}: ${msg.params.args.map((a) => a.value ?? a.description).join(' ')}`);
    if (msg.method === 'Runtime.exceptionThrown') messages.push(`exception: ${msg.params.exceptionDetails.exception?.description ?? msg.params.exceptionDetails.text}`);
    if (msg.method === 'Log.entryAdded') messages.push(`log.${msg.params.entry.level}: ${msg.params.entry.text}`);
  });

  const evaluate = async (expression) => {
    const result = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    if (result.exceptionDetails) throw new Error(result.exceptionDetails.exception?.description ?? result.exceptionDetails.text);
    return result.result.value;
  };
  return {
    send, evaluate, messages,
    async goto(url, { waitReady = true, timeoutMs = 15000 } = {}) {
      const t0 = Date.now();
      await send('Page.navigate', { url });
      if (!waitReady) return 0;
      for (;;) {
        const ready = await evaluate('document.body && document.body.dataset.ready === "1"').catch(() => false);
        if (ready) return Date.now() - t0;
        if (Date.now() - t0 > timeoutMs) throw new Error(`not ready: ${url}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async screenshot(path, { fullPage = false } = {}) {
      const { writeFileSync } = await import('node:fs');
      const params = { format: 'png' };
      if (fullPage) {
        const { cssContentSize } = await send('Page.getLayoutMetrics');
        params.clip = { x: 0, y: 0, width: width, height: Math.min(cssContentSize.height, 4000), scale: 1 };
        params.captureBeyondViewport = true;
      }
      const { data } = await send('Page.captureScreenshot', params);
      writeFileSync(path, Buffer.from(data, 'base64'));
      return path;
    },
    async key(key, { code, text, modifiers = 0 } = {}) {
      const base = { key, code: code ?? key, modifiers, windowsVirtualKeyCode: VK[key] ?? (key.length === 1 ? key.toUpperCase().charCodeAt(0) : 0) };
      await send('Input.dispatchKeyEvent', { type: 'keyDown', ...base, text: text ?? (key.length === 1 ? key : undefined) });
      await send('Input.dispatchKeyEvent', { type: 'keyUp', ...base });
    },
    async click(x, y) {
      await send('Input.dispatchMouseEvent', { type: 'mousePressed', x, y, button: 'left', clickCount: 1 });
      await send('Input.dispatchMouseEvent', { type: 'mouseReleased', x, y, button: 'left', clickCount: 1 });
    },
    async close() {
      ws.close();
      proc.kill();
      await new Promise((r) => proc.once('exit', r));
      try {
        // Chromium's helpers may still be writing to the profile for a moment.
        rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      } catch {
        // a leftover temporary profile is harmless
      }
    },
  };
}

const VK = { ArrowDown: 40, ArrowUp: 38, ArrowLeft: 37, ArrowRight: 39, Enter: 13, Escape: 27, Home: 36, End: 35, Tab: 9, '/': 191 };
