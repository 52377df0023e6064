package rayproxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// tunnel answers a CONNECT as the cluster's network would: a loopback target (the emulator's own
// servers, such as its webhooks) is dialled and piped; a Pod or Service of the cluster is answered
// by the proxy itself, each request carried by the tunnel served as serve serves a proxied one.
// The kube-apiserver reaches the cluster this way (its "cluster" egress through an HTTP CONNECT
// proxy, as GKE's control plane reaches nodes and Pods through Konnectivity).
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	target := r.URL.Host
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		http.Error(w, "CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	var upstream net.Conn
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		if upstream, err = net.DialTimeout("tcp", target, 10*time.Second); err != nil {
			badGateway(w, target, err.Error())
			return
		}
	} else if kube := p.cfg.Kube(); kube == nil {
		badGateway(w, target, "the cluster's Kubernetes API is not running")
		return
	} else if _, err := resolve(r.Context(), kube, target); err != nil {
		// Nothing answers there: the dial fails, as a refused connection would.
		badGateway(w, target, err.Error())
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "cannot tunnel", http.StatusInternalServerError)
		return
	}
	conn, buffered, err := hj.Hijack()
	if err != nil {
		return
	}
	if !p.track(conn) {
		conn.Close()
		return
	}
	defer p.untrack(conn)
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		return
	}
	client := &bufferedConn{Conn: conn, r: buffered.Reader}
	if upstream != nil {
		pipe(client, upstream)
		return
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serve(w, r, target) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	_ = srv.Serve(newOneConnListener(client))
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.tunnels[c] = true
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.tunnels, c)
	p.mu.Unlock()
}

// pipe copies both ways until either side ends, then closes both.
func pipe(a, b net.Conn) {
	var once sync.Once
	done := make(chan struct{})
	closeBoth := func() { once.Do(func() { a.Close(); b.Close(); close(done) }) }
	go func() { _, _ = io.Copy(a, b); closeBoth() }()
	go func() { _, _ = io.Copy(b, a); closeBoth() }()
	<-done
}

// bufferedConn reads what the hijacked connection's reader holds before the connection itself.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// oneConnListener hands out one connection, then blocks until it is closed.
type oneConnListener struct {
	conn net.Conn
	once sync.Once
	done chan struct{}
}

func newOneConnListener(c net.Conn) *oneConnListener {
	l := &oneConnListener{done: make(chan struct{})}
	l.conn = &notifyingConn{Conn: c, closed: func() { l.once.Do(func() { close(l.done) }) }}
	return l
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	if c := l.conn; c != nil {
		l.conn = nil
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return dummyAddr{} }

type dummyAddr struct{}

func (dummyAddr) Network() string { return "tcp" }
func (dummyAddr) String() string  { return "tunnel" }

// notifyingConn calls closed once it is closed.
type notifyingConn struct {
	net.Conn
	closed func()
}

func (c *notifyingConn) Close() error {
	err := c.Conn.Close()
	c.closed()
	return err
}
