// A Node http2 client for tests/tools/h2_clients.py: http2.connect() to
// URL (http:// is h2c by prior knowledge, https:// h2 by ALPN with the
// certificate unchecked: it is made for the run), GET each PATH on that
// one session, and print one JSON line per path:
// {"path", "status", "proto", "body" (base64), "error"}.
//
//   usage: node node_client.mjs URL PATH...
import http2 from 'node:http2';

const [url, ...paths] = process.argv.slice(2);
if (!url || paths.length === 0) {
  console.error('usage: node node_client.mjs URL PATH...');
  process.exit(2);
}
const timer = setTimeout(() => {
  console.error('node_client: no answer in 5 s');
  process.exit(1);
}, 5000);

const session = http2.connect(url, { rejectUnauthorized: false });
session.on('error', (err) => {
  console.log(JSON.stringify({ path: '', status: 0, proto: '', body: '', error: String(err) }));
  process.exit(1);
});

function get(path) {
  return new Promise((resolve) => {
    const answer = { path, status: 0, proto: '', body: '' };
    const req = session.request({ ':method': 'GET', ':path': path });
    const chunks = [];
    req.on('response', (headers) => {
      answer.status = headers[':status'];
      answer.proto = session.alpnProtocol;
    });
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      answer.body = Buffer.concat(chunks).toString('base64');
      resolve(answer);
    });
    req.on('error', (err) => {
      answer.error = String(err);
      resolve(answer);
    });
    req.end();
  });
}

const answers = await Promise.all(paths.map(get));
for (const a of answers) console.log(JSON.stringify(a));
clearTimeout(timer);
session.close();
