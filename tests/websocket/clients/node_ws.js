// Node's ws (the version scripts/peers/websocket/apps/package-lock.json
// pins, found through NODE_PATH) against one persona's echo: text and
// binary of every size (as wsc_common.py makes them), fragmented messages
// (ws.send(data, {fin: false}) then {fin: true}, text cut inside a UTF-8
// character), a ping and its pong, the close 1000 and the server's answer;
// with perMessageDeflate (threshold 0: every message compressed when
// agreed) and without. One PASS or FAIL line per check; the whole run is
// bounded (RUN_MS) and every wait too (STEP_MS).
//
//   node node_ws.js URL LIMIT yes|no
'use strict';
const crypto = require('crypto');
const WebSocket = require('ws');

const STEP_MS = 15000;
const RUN_MS = 90000;
const MIB = 1 << 20;
const TEXT_UNIT = 'a\u00e9\u20ac\u{1d11e}z ';
const version = require('ws/package.json').version;
let variant = '';
let passed = 0;
let failed = 0;

function line(ok, what, detail) {
  if (ok) passed++; else failed++;
  const v = variant ? `${variant}: ` : '';
  console.log(`${ok ? 'PASS' : 'FAIL'} ws-${version} ${v}${what}${!ok && detail ? ` (${detail})` : ''}`);
}

function sizes(limit) {
  const top = Math.min(MIB, limit);
  const all = new Set([0, 1, 125, 126, 65535, 65536].filter((s) => s <= top).concat([top]));
  return [...all].sort((a, b) => a - b);
}

function text(n) {
  const unit = Buffer.byteLength(TEXT_UNIT);
  return TEXT_UNIT.repeat(Math.floor(n / unit)) + 'x'.repeat(n % unit);
}

function binary(n) {
  return crypto.randomBytes(n);
}

function bounded(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${STEP_MS} ms`)), STEP_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// A socket whose messages, pongs and close wait in queues for next().
function open(url, deflate) {
  const ws = new WebSocket(url, {
    perMessageDeflate: deflate ? { threshold: 0 } : false,
    rejectUnauthorized: false,
    handshakeTimeout: STEP_MS,
    maxPayload: 0,
  });
  const queue = [];
  let waiting = null;
  const push = (item) => {
    queue.push(item);
    if (waiting) { const w = waiting; waiting = null; w(); }
  };
  ws.on('message', (data, isBinary) => push({ kind: 'message', data, isBinary }));
  ws.on('pong', (data) => push({ kind: 'pong', data }));
  ws.on('close', (code) => push({ kind: 'close', code }));
  ws.on('error', (error) => push({ kind: 'error', error }));
  ws.next = (what) => bounded(new Promise((resolve) => {
    const take = () => resolve(queue.shift());
    if (queue.length) take(); else waiting = take;
  }), what);
  return bounded(new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  }), 'handshake');
}

function send(ws, data, options) {
  return new Promise((resolve, reject) => ws.send(data, options, (e) => (e ? reject(e) : resolve())));
}

async function expectEcho(ws, want, isBinary, what) {
  const got = await ws.next(what);
  if (!got || got.kind !== 'message') {
    line(false, what, `got ${got ? got.kind : 'nothing'} ${got && got.code ? got.code : ''}`);
  } else if (got.isBinary !== isBinary) {
    line(false, what, `got ${got.isBinary ? 'binary' : 'text'}`);
  } else {
    line(Buffer.compare(got.data, want) === 0, what, `got ${got.data.length} bytes, differing`);
  }
}

async function fragmented(ws, limit) {
  const big = Math.min(65536, limit);
  const sets = [
    ['text small', false, [Buffer.from('frag-'), Buffer.alloc(0), Buffer.from('m\u00e9nt \u20ac')]],
    ['binary small', true, [Buffer.from([0, 1]), Buffer.alloc(0), Buffer.alloc(100, 0xff)]],
  ];
  for (const [label, isBinary, data] of [[`text ${big}`, false, Buffer.from(text(big))],
    [`binary ${big}`, true, binary(big)]]) {
    // Cut at 7 and every 4093 bytes: the text's characters are split.
    const parts = [];
    for (let at = 0; at < data.length; at += at === 0 ? 7 : 4093) {
      parts.push(data.subarray(at, at === 0 ? 7 : at + 4093));
    }
    sets.push([`${label} in ${parts.length}`, isBinary, parts]);
  }
  for (const [label, isBinary, parts] of sets) {
    for (let i = 0; i < parts.length; i++) {
      await send(ws, parts[i], { binary: isBinary, fin: i === parts.length - 1 });
    }
    await expectEcho(ws, Buffer.concat(parts), isBinary, `fragmented ${label} (fin: false ${parts.length - 1} times)`);
  }
}

async function session(url, limit, deflate, expectDeflate) {
  variant = deflate ? 'perMessageDeflate' : 'perMessageDeflate false';
  const ws = await open(url, deflate);
  const agreed = /permessage-deflate/.test(ws.extensions);
  line(agreed === (deflate && expectDeflate), `permessage-deflate ${agreed ? 'agreed' : 'not agreed'}`);
  for (const size of sizes(limit)) {
    const t = text(size);
    await send(ws, t, {});
    await expectEcho(ws, Buffer.from(t), false, `text ${size}`);
    const b = binary(size);
    await send(ws, b, { binary: true });
    await expectEcho(ws, b, true, `binary ${size}`);
  }
  await fragmented(ws, limit);
  ws.ping(Buffer.from('node-ping'));
  const pong = await ws.next('pong');
  line(pong && pong.kind === 'pong' && pong.data.toString() === 'node-ping', 'ping answered by its pong',
    `got ${pong && pong.kind}`);
  ws.close(1000);
  const close = await ws.next('close');
  line(close && close.kind === 'close' && close.code === 1000, 'close 1000 answered with 1000',
    `got ${close && close.kind} ${close && close.code}`);
}

async function main() {
  const [url, limitText, deflateWord] = process.argv.slice(2);
  if (!url || !/^(yes|no)$/.test(deflateWord || '')) {
    console.error('usage: node node_ws.js URL LIMIT yes|no');
    process.exit(2);
  }
  setTimeout(() => { line(false, 'run', `not done in ${RUN_MS} ms`); process.exit(1); }, RUN_MS).unref();
  for (const deflate of [true, false]) {
    try {
      await session(url, Number(limitText), deflate, deflateWord === 'yes');
    } catch (e) {
      line(false, 'session', `${e.name}: ${e.message}`);
    }
  }
  process.exit(failed || !passed ? 1 : 0);
}

main();
