// gorilla/websocket 1.5 echo at /ws on 127.0.0.1:$PORT, as its own example
// server (examples/echo/server.go) writes it: an Upgrader with every default
// (4 KiB read and write buffers, no compression, Origin checked only when
// sent), then ReadMessage and WriteMessage of the same type until the
// connection ends. $WORKERS (default 1) OS threads run Go code. Built by
// scripts/bench --ws offline in GOPATH mode against Debian's
// golang-github-gorilla-websocket-dev (/usr/share/gocode).
package main

import (
	"log"
	"net/http"
	"os"
	"runtime"
	"strconv"

	"github.com/gorilla/websocket"
)

var upgrader = websocket.Upgrader{}

func echo(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	for {
		kind, message, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(kind, message); err != nil {
			return
		}
	}
}

func main() {
	workers, err := strconv.Atoi(os.Getenv("WORKERS"))
	if err != nil || workers < 1 {
		workers = 1
	}
	runtime.GOMAXPROCS(workers)
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	http.HandleFunc("/ws", echo)
	log.Printf("listening on 127.0.0.1:%s", port)
	log.Fatal(http.ListenAndServe("127.0.0.1:"+port, nil))
}
