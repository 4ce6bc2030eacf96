package connect

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// ErrRedirect matches an answer that redirects (a 3xx status) — such as the
// 301 or 308 a load balancer sends from http:// to https://. The client
// follows no redirect, for any method: a 301 or 302 would turn a PUT, PATCH
// or DELETE into a GET that reports success with nothing written, and a 307
// or 308 would send the request's body and credentials to whatever origin
// the answer names. Nothing reached the worker; no retry helps: configure
// the URL the answer points to (RedirectError.BaseURL) after checking it
// is the Connect REST API's. The concrete error is *RedirectError.
var ErrRedirect = errkind.New(errkind.Rejected, "connect: redirected")

// RedirectError reports a 3xx answer. Location is where it pointed,
// resolved against the request URL, without user info, query or fragment
// ("" when the answer named none). BaseURL is the base URL that would have
// sent the same request there — Location without the request's path — or ""
// when Location does not end with that path (a login page, say). Neither
// ever holds a credential.
//
// It matches ErrRedirect.
type RedirectError struct {
	Method, Path string
	StatusCode   int
	Location     string
	BaseURL      string
}

func (e *RedirectError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "connect: %s %s: %d %s", e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Location != "" {
		b.WriteString(" to " + e.Location)
	}
	b.WriteString(": redirects are not followed")
	if e.BaseURL != "" {
		b.WriteString(": configure " + e.BaseURL + " as the Connect URL if it is the Connect REST API")
	}
	return b.String()
}

// Is reports true for ErrRedirect.
func (e *RedirectError) Is(target error) bool { return target == ErrRedirect }

// ErrorKind is errkind.Rejected: configure the URL; nothing was sent where
// the answer points.
func (e *RedirectError) ErrorKind() errkind.Kind { return errkind.Rejected }

// Advice says what to do about a redirect.
func (e *RedirectError) Advice() string {
	if e.BaseURL != "" {
		return "the Connect URL redirects, and the client follows no redirect (a write would not reach the worker, and credentials would go to another origin): " +
			"check that " + e.BaseURL + " is the Connect REST API and configure it as the Connect URL"
	}
	return "the Connect URL redirects, and the client follows no redirect (a write would not reach the worker, and credentials would go to another origin): " +
		"configure the URL of the Connect REST API itself"
}

// newRedirectError describes the 3xx answer resp to req.
func newRedirectError(req request, resp *http.Response) *RedirectError {
	e := &RedirectError{Method: req.method, Path: req.path, StatusCode: resp.StatusCode}
	loc, err := resp.Location()
	if err != nil {
		return e
	}
	loc.User, loc.RawQuery, loc.ForceQuery, loc.Fragment, loc.RawFragment = nil, "", false, "", ""
	e.Location = loc.String()
	if (loc.Scheme != "http" && loc.Scheme != "https") || loc.Host == "" {
		return e
	}
	// req.path is the escaped path relative to the base URL.
	if prefix, ok := strings.CutSuffix(loc.EscapedPath(), req.path); ok {
		base := url.URL{Scheme: loc.Scheme, Host: loc.Host}
		if p, err := url.PathUnescape(prefix); err == nil {
			base.Path, base.RawPath = p, prefix
		}
		e.BaseURL = strings.TrimRight(base.String(), "/")
	}
	return e
}
