// Node's http module as a peer: "Hello!!!" as text/plain on 127.0.0.1:$PORT,
// one process.
const http = require('http');

const port = Number(process.env.PORT || 3000);
http.createServer((req, res) => {
  res.writeHead(200, {'Content-Type': 'text/plain'});
  res.end('Hello!!!');
}).listen(port, '127.0.0.1');
