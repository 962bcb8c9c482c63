// Node 20 with the ws library (8.23.1, pinned in package.json and
// package-lock.json beside this file): an echo at /ws on 127.0.0.1:$PORT, as
// ws's README writes its server, every option at its default (no
// permessage-deflate, 100 MiB max payload, no pings), one process. Each
// message goes back with the type it came with. Without bufferutil and
// utf-8-validate (optional native add-ons, not installed): ws's JavaScript
// masking and UTF-8 check. Its own HTTP server answers anything but an
// upgrade to /ws with 426. scripts/bench --ws installs ws with `npm ci` into
// build/peers/node_ws and runs this with NODE_PATH pointing there.
const { WebSocketServer } = require('ws');

const port = Number(process.env.PORT || 3000);
const wss = new WebSocketServer({ host: '127.0.0.1', port, path: '/ws' });
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => {
    ws.send(data, { binary: isBinary });
  });
});
wss.on('listening', () => console.error(`listening on 127.0.0.1:${port}`));
