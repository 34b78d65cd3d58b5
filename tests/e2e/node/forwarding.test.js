'use strict';
// A second, independent client stack (@grpc/grpc-js) through the proxy to the Python upstream.
// Raw Buffer (de)serializers: the proxy must not care what the bytes mean.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const readline = require('node:readline');
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const crypto = require('node:crypto');
const grpc = require('@grpc/grpc-js');

const DIRECT = process.env.SPARKTRACE_DIRECT === '1';
const PYTHON = process.env.SPARKTRACE_PYTHON || '/usr/bin/python3';
const BIN = process.env.SPARKTRACE_BIN || path.resolve(__dirname, '../../../build/sparktrace');
const UPSTREAM = path.resolve(__dirname, '../peers/upstream_server.py');
const SVC = '/sparktrace.test.Echo';
const raw = (b) => b;
const sha256 = (b) => crypto.createHash('sha256').update(b).digest();
const deadline = () => ({ deadline: Date.now() + 20000 });
// Each test and hook fails after SPARKTRACE_TEST_DEADLINE seconds (0: never), as the Python
// modules' do (deadline.py), rather than waiting for CTest to kill the whole file.
const DEADLINE_S = Number(process.env.SPARKTRACE_TEST_DEADLINE || 150);
const LIMIT = DEADLINE_S > 0 ? { timeout: DEADLINE_S * 1000 } : {};

// Same as peers/upstream_server.py pattern(): 8-byte big-endian index, then sha256 filler.
function pattern(seed, index, size) {
  const block = sha256(Buffer.from(`${seed}/${index}`));
  const head = Buffer.alloc(8);
  head.writeBigUInt64BE(BigInt(index));
  const body = Buffer.concat([head, ...Array(Math.floor(Math.max(size - 8, 0) / 32) + 1).fill(block)]);
  return body.subarray(0, size);
}

// Spawn a server and resolve once its first stdout line matches `re` (no sleeping).
function startServer(cmd, args, re, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-20000); });
    const fail = (why) => { child.kill('SIGKILL'); reject(new Error(`${cmd}: ${why}\n${stderr}`)); };
    const timer = setTimeout(() => fail('no listening line within 20s'), 20000);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${cmd} exited ${code}\n${stderr}`)); });
    child.on('error', (err) => { clearTimeout(timer); reject(new Error(`${cmd}: ${err.message}`)); });
    readline.createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      const m = re.exec(line);
      if (!m) return fail(`unexpected first line ${JSON.stringify(line)}`);
      child.removeAllListeners('exit');
      resolve({ child, match: m, stderr: () => stderr });
    });
  });
}

// Without the caller's SPARKTRACE_* variables, which would act as proxy flag fallbacks.
function cleanEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SPARKTRACE_')));
}

let upstream;
let proxy;
let client;
// The proxy traces by default: its store and spool go here, never into the working directory.
let tmp;

before(async () => {
  upstream = await startServer(PYTHON, [UPSTREAM, '--port', '0'], /^listening (\d+)$/, process.env);
  let address = `127.0.0.1:${upstream.match[1]}`;
  if (!DIRECT) {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sparktrace-node-forwarding-'));
    proxy = await startServer(BIN, ['proxy', '--upstream', address, '--listen', '127.0.0.1:0',
      '--admin', '127.0.0.1:0', '--drain-timeout', '3s', '--store', path.join(tmp, 'spans.db')],
    /^listening grpc=(127\.0\.0\.1:\d+) admin=(127\.0\.0\.1:\d+)$/, cleanEnv());
    address = proxy.match[1];
  }
  client = new grpc.Client(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': -1, 'grpc.max_send_message_length': -1,
  });
}, LIMIT);

after(async () => {
  if (client) client.close();
  try {
    if (proxy) {
      // The proxy must still be running (no crash) and exit 0 on SIGTERM. A process killed by a
      // signal has exitCode null too: without signalCode, the wait below would never end.
      assert.deepEqual([proxy.child.exitCode, proxy.child.signalCode], [null, null],
        `proxy died early\n${proxy.stderr()}`);
      const exited = new Promise((resolve) => proxy.child.once('exit', (code, sig) => resolve([code, sig])));
      proxy.child.kill('SIGTERM');
      const timer = setTimeout(() => proxy.child.kill('SIGKILL'), 10000);
      const [code, sig] = await exited;
      clearTimeout(timer);
      assert.deepEqual([code, sig], [0, null], `proxy exit on SIGTERM\n${proxy.stderr()}`);
    }
  } finally {
    // Always, or its open pipes keep the test process alive.
    if (proxy && proxy.child.exitCode === null && proxy.child.signalCode === null) proxy.child.kill('SIGKILL');
    if (upstream) upstream.child.kill('SIGKILL');
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
}, LIMIT);

// Resolves {response, initial, status} of a unary call; rejects with the ServiceError.
function unary(method, payload, metadata) {
  return new Promise((resolve, reject) => {
    let initial;
    let response;
    const call = client.makeUnaryRequest(`${SVC}/${method}`, raw, raw, payload, metadata, deadline(),
      (err, res) => { if (err) reject(err); else response = res; });
    call.on('metadata', (md) => { initial = md; });
    call.on('status', (status) => { if (status.code === grpc.status.OK) resolve({ response, initial, status }); });
  });
}

test('unary: random payload, -bin metadata both ways, trailers', LIMIT, async () => {
  const payload = crypto.randomBytes(100_003);
  const blob = Buffer.from([...Array(256).keys()]);
  const md = new grpc.Metadata();
  md.add('authorization', 'Bearer node-token');
  md.add('x-echo-initial-x-raw-bin', blob);
  md.add('x-echo-initial-x-multi', 'one');
  md.add('x-echo-initial-x-multi', 'two');
  md.add('x-echo-trailing-x-tail-bin', Buffer.from([0, 13, 10, 0]));
  const { response, initial, status } = await unary('Unary', payload, md);
  assert.ok(response.equals(payload), 'payload changed');
  assert.deepEqual(initial.get('x-raw-bin'), [blob]);
  // Node's http2 layer folds repeated ASCII headers into one "a, b" value; order still shows.
  assert.equal(initial.get('x-multi').join(', '), 'one, two');
  assert.deepEqual(status.metadata.get('x-tail-bin'), [Buffer.from([0, 13, 10, 0])]);
  assert.deepEqual(status.metadata.get('x-request-sha256'), [sha256(payload).toString('hex')]);
});

test('server streaming: every message in order', LIMIT, async () => {
  const seed = `node-${crypto.randomUUID()}`;
  const md = new grpc.Metadata();
  md.add('x-test-seed', seed);
  md.add('x-test-stream-count', '40');
  md.add('x-test-message-bytes', '20000');
  const stream = client.makeServerStreamRequest(`${SVC}/ServerStream`, raw, raw, Buffer.from('go'), md, deadline());
  const got = [];
  for await (const message of stream) got.push(message);
  assert.equal(got.length, 40);
  got.forEach((m, i) => assert.ok(m.equals(pattern(seed, i, 20000)), `message ${i} differs`));
});

test('client streaming: upstream saw each message intact', LIMIT, async () => {
  const requests = [0, 1, 999, 65536, 300000].map((n) => crypto.randomBytes(n));
  const response = await new Promise((resolve, reject) => {
    const call = client.makeClientStreamRequest(`${SVC}/ClientStream`, raw, raw, new grpc.Metadata(), deadline(),
      (err, res) => (err ? reject(err) : resolve(res)));
    requests.forEach((r) => call.write(r));
    call.end();
  });
  assert.ok(response.equals(Buffer.concat(requests.map(sha256))), 'upstream digests differ');
});

test('error status: code, message and grpc-status-details-bin byte-exact', LIMIT, async () => {
  const details = Buffer.concat([Buffer.from([0x08, 0x09, 0x12, 0x04]), Buffer.from('nope'), crypto.randomBytes(64)]);
  const md = new grpc.Metadata();
  md.add('x-test-status-code', String(grpc.status.FAILED_PRECONDITION));
  md.add('x-test-status-message', 'nope: 100% sure');
  md.add('x-test-status-details-bin', details);
  md.add('x-echo-trailing-x-why', 'because');
  await assert.rejects(unary('Unary', Buffer.from('x'), md), (err) => {
    assert.equal(err.code, grpc.status.FAILED_PRECONDITION);
    assert.equal(err.details, 'nope: 100% sure');
    assert.deepEqual(err.metadata.get('grpc-status-details-bin'), [details]);
    assert.deepEqual(err.metadata.get('x-why'), ['because']);
    return true;
  });
});

test('unknown method: upstream UNIMPLEMENTED relayed', LIMIT, async () => {
  await assert.rejects(unary('NoSuchMethod', Buffer.alloc(0), new grpc.Metadata()),
    (err) => { assert.equal(err.code, grpc.status.UNIMPLEMENTED); return true; });
});
