// Go's net/http as a peer: "Hello!!!" as text/plain on 127.0.0.1:$PORT,
// with $WORKERS (default 1) OS threads running Go code. Standard library only.
// With $TLS_CERT and $TLS_KEY (PEM files) it serves HTTPS, and HTTP/2 by
// ALPN (h2, which the standard library offers by itself over TLS).
package main

import (
	"log"
	"net/http"
	"os"
	"runtime"
	"strconv"
)

var hello = []byte("Hello!!!")

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
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(hello)
	})
	log.Printf("listening on 127.0.0.1:%s", port)
	if cert := os.Getenv("TLS_CERT"); cert != "" {
		log.Fatal(http.ListenAndServeTLS("127.0.0.1:"+port, cert, os.Getenv("TLS_KEY"), nil))
	}
	log.Fatal(http.ListenAndServe("127.0.0.1:"+port, nil))
}
