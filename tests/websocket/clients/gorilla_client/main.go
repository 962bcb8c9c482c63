// gorilla/websocket (Debian's golang-github-gorilla-websocket-dev, 1.5)
// against one persona's echo: text and binary of every size (as
// wsc_common.py makes them), a ping and its pong, the close 1000 and the
// server's answer. Three variants: EnableCompression false with a write
// buffer larger than any message (every message one frame);
// EnableCompression true (gorilla offers only no context takeover, which
// the personas decline, docs/websocket.md: the agreement is an INFO line);
// and a 256-byte write buffer, so that NextWriter's Write calls go out as
// many fragments (text cut inside UTF-8 characters). One PASS or FAIL line
// per check; every read and write has a deadline. Built offline in GOPATH
// mode by run.py.
//
//	gorilla_client URL LIMIT yes|no
package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

const (
	step     = 15 * time.Second
	mib      = 1 << 20
	textUnit = "a\u00e9\u20ac\U0001d11ez "
)

var (
	variant        string
	passed, failed int
)

func line(ok bool, what, detail string) {
	word := "PASS"
	if ok {
		passed++
	} else {
		failed++
		word = "FAIL"
		if detail != "" {
			what += " (" + detail + ")"
		}
	}
	fmt.Printf("%s gorilla/websocket %s: %s\n", word, variant, what)
}

func sizes(limit int) []int {
	top := limit
	if top > mib {
		top = mib
	}
	seen := map[int]bool{top: true}
	for _, s := range []int{0, 1, 125, 126, 65535, 65536} {
		if s <= top {
			seen[s] = true
		}
	}
	var all []int
	for s := range seen {
		all = append(all, s)
	}
	sort.Ints(all)
	return all
}

func text(n int) []byte {
	return []byte(strings.Repeat(textUnit, n/len(textUnit)) + strings.Repeat("x", n%len(textUnit)))
}

func binary(n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(int64(n))).Read(b)
	return b
}

// send writes one message through NextWriter in Write calls of at most
// `piece` bytes; the writer's buffer decides the frames.
func send(c *websocket.Conn, kind int, data []byte, piece int) error {
	c.SetWriteDeadline(time.Now().Add(step))
	w, err := c.NextWriter(kind)
	if err != nil {
		return err
	}
	for at := 0; at < len(data); at += piece {
		end := at + piece
		if end > len(data) {
			end = len(data)
		}
		if _, err := w.Write(data[at:end]); err != nil {
			return err
		}
	}
	return w.Close()
}

func echo(c *websocket.Conn, kind int, data []byte, piece int, what string) {
	if err := send(c, kind, data, piece); err != nil {
		line(false, what, "send: "+err.Error())
		return
	}
	c.SetReadDeadline(time.Now().Add(step))
	got, message, err := c.ReadMessage()
	switch {
	case err != nil:
		line(false, what, "read: "+err.Error())
	case got != kind:
		line(false, what, fmt.Sprintf("got message type %d", got))
	default:
		line(bytes.Equal(message, data), what, fmt.Sprintf("got %d bytes, differing", len(message)))
	}
}

func pingAndClose(c *websocket.Conn) {
	pong := ""
	c.SetPongHandler(func(data string) error { pong = data; return nil })
	c.WriteControl(websocket.PingMessage, []byte("gorilla-ping"), time.Now().Add(step))
	echo(c, websocket.TextMessage, []byte("after the ping"), 4096, "a text after a ping")
	line(pong == "gorilla-ping", "ping answered by its pong (before the echo)", "pong "+strconv.Quote(pong))
	c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1000, ""), time.Now().Add(step))
	c.SetReadDeadline(time.Now().Add(step))
	_, _, err := c.ReadMessage()
	ce, ok := err.(*websocket.CloseError)
	line(ok && ce.Code == 1000, "close 1000 answered with 1000", fmt.Sprintf("got %v", err))
}

func session(url string, limit int, compress bool, buffer int, expect *bool) {
	dialer := websocket.Dialer{
		HandshakeTimeout:  step,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		EnableCompression: compress,
		WriteBufferSize:   buffer,
	}
	c, resp, err := dialer.Dial(url, nil)
	if err != nil {
		line(false, "handshake", err.Error())
		return
	}
	defer c.Close()
	agreed := strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate")
	word := map[bool]string{true: "agreed", false: "not agreed"}[agreed]
	if expect == nil {
		fmt.Printf("INFO gorilla/websocket %s: permessage-deflate %s\n", variant, word)
	} else {
		line(agreed == *expect, "permessage-deflate "+word, "")
	}
	piece := 1 << 30
	if buffer < 4096 {
		piece = 1000 // several Write calls, each filling the buffer more than once
	}
	for _, size := range sizes(limit) {
		echo(c, websocket.TextMessage, text(size), piece, fmt.Sprintf("text %d", size))
		echo(c, websocket.BinaryMessage, binary(size), piece, fmt.Sprintf("binary %d", size))
	}
	pingAndClose(c)
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gorilla_client URL LIMIT yes|no")
		os.Exit(2)
	}
	url := os.Args[1]
	limit, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gorilla_client: LIMIT:", err)
		os.Exit(2)
	}
	no := false
	whole := mib + 64 // more than any message and its header: one frame each
	variant = "EnableCompression false"
	session(url, limit, false, whole, &no)
	variant = "EnableCompression true"
	session(url, limit, true, whole, nil)
	variant = "WriteBufferSize 256 (fragments)"
	session(url, limit, false, 256, &no)
	if failed > 0 || passed == 0 {
		os.Exit(1)
	}
}
