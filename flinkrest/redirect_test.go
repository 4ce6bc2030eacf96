package flinkrest_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/flinkrest"
)

// A JobManager that accepts the connection and never answers: the request
// ends at the client's timeout, not never.
func TestF3NoAnswerTimesOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	c, err := flinkrest.New("http://"+l.Addr().String(), nil, flinkrest.WithTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Job(context.Background(), "j1"); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 100ms") {
			t.Errorf("got %v, want a timeout that says so", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("no error a minute after a 100 ms request timeout")
	}
	// The caller's context still wins.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Job(ctx, "j1"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := flinkrest.New("http://flink:8081", nil, flinkrest.WithTimeout(d)); err == nil {
			t.Errorf("WithTimeout(%v) accepted", d)
		}
	}
}

type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, fmt.Sprintf("%s %s (Authorization %q)", req.Method, req.URL.Path, req.Header.Get("Authorization")))
	r.mu.Unlock()
	w.Write([]byte(`{"jid":"j1","name":"x","state":"CANCELED","end-time":5}`))
}

func listen(t *testing.T, addr string) *recorder {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	r.srv = httptest.NewUnstartedServer(r)
	r.srv.Listener.Close()
	r.srv.Listener = l
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

// The Flink REST client follows no redirect either: nothing reaches where
// the answer points, and the URL's credentials stay with the configured
// origin and out of every error.
func TestF1FlinkRedirectNotFollowed(t *testing.T) {
	const password = "fl1nk-Pa55"
	pair := base64.StdEncoding.EncodeToString([]byte("ops:" + password))
	targets := map[string]*recorder{"other-port": listen(t, "127.0.0.1:0"), "other-host": listen(t, "127.0.0.2:0")}
	for _, code := range []int{301, 302, 307, 308} {
		for name, target := range targets {
			for _, own := range []bool{false, true} {
				t.Run(fmt.Sprintf("%d/%s/own-client=%v", code, name, own), func(t *testing.T) {
					var auth []string
					origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						auth = append(auth, r.Header.Get("Authorization"))
						loc, _ := url.Parse(target.srv.URL + r.URL.Path)
						loc.User = url.UserPassword("lb", "lb-secret")
						w.Header().Set("Location", loc.String())
						w.WriteHeader(code)
					}))
					defer origin.Close()
					u, _ := url.Parse(origin.URL + "/flink")
					u.User = url.UserPassword("ops", password)
					var hc *http.Client
					if own {
						hc = &http.Client{}
					}
					c, err := flinkrest.New(u.String(), hc)
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(c.String(), password) {
						t.Errorf("String() %q shows the password", c)
					}
					_, err = c.Job(context.Background(), "j1")
					var re *flinkrest.RedirectError
					if !errors.Is(err, flinkrest.ErrRedirect) || !errors.As(err, &re) || re.StatusCode != code {
						t.Fatalf("got %v, want a *flinkrest.RedirectError of %d", err, code)
					}
					if re.BaseURL != target.srv.URL+"/flink" {
						t.Errorf("BaseURL %q, want %q", re.BaseURL, target.srv.URL+"/flink")
					}
					for _, s := range []string{password, pair, "lb-secret"} {
						if strings.Contains(err.Error(), s) {
							t.Errorf("%q shows %q", err, s)
						}
					}
					if want := "Basic " + pair; len(auth) != 1 || auth[0] != want {
						t.Errorf("the origin got Authorization %q, want once %q", auth, want)
					}
					if own && hc.CheckRedirect != nil {
						t.Error("the caller's http.Client was changed")
					}
					target.mu.Lock()
					defer target.mu.Unlock()
					if len(target.seen) > 0 {
						t.Errorf("the redirect target got requests: %q", target.seen)
					}
				})
			}
		}
	}
}
