// A Go net/http client for tests/tools/h2_clients.py: GET each PATH from
// https://127.0.0.1:PORT over HTTP/2 (ALPN h2; the certificate is not
// checked, it is made for the run) on one connection, and print one JSON
// line per path: {"path", "status", "proto", "body" (base64), "error"}.
// Standard library only (Go 1.19): net/http speaks h2 over TLS by itself,
// but h2c by prior knowledge needs golang.org/x/net/http2, which this
// offline build cannot fetch, so the driver skips Go's h2c.
//
//	usage: go_client PORT PATH...
package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

type answer struct {
	Path   string `json:"path"`
	Status int    `json:"status"`
	Proto  string `json:"proto"`
	Body   []byte `json:"body"`
	Error  string `json:"error,omitempty"`
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go_client PORT PATH...")
		os.Exit(2)
	}
	client := &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}},
			ForceAttemptHTTP2: true,
		},
	}
	out := json.NewEncoder(os.Stdout)
	for _, path := range os.Args[2:] {
		a := answer{Path: path}
		resp, err := client.Get("https://127.0.0.1:" + os.Args[1] + path)
		if err != nil {
			a.Error = err.Error()
		} else {
			a.Status = resp.StatusCode
			a.Proto = resp.Proto
			a.Body, err = io.ReadAll(resp.Body)
			if err != nil {
				a.Error = err.Error()
			}
			resp.Body.Close()
		}
		if err := out.Encode(a); err != nil {
			os.Exit(1)
		}
	}
}
