package connect

import (
	"context"
	"net/http"
	"net/url"
)

// URL returns the base URL the client sends requests to, without
// credentials.
func (c *Client) URL() string { return c.base }

// SendsBasicAuth reports whether the client sends basic-auth credentials
// with every request.
func (c *Client) SendsBasicAuth() bool { return c.basicAuth }

// ConnectorInfos lists every connector with its stored configuration (as
// submitted: config provider references are not resolved) and tasks, in
// one request (GET /connectors?expand=info), keyed by connector name. A
// connector deleted while the worker builds the answer is left out by
// Connect. The configurations may hold secrets in plain text: never print
// them whole (see redact.Config).
func (c *Client) ConnectorInfos(ctx context.Context) (map[string]ConnectorInfo, error) {
	var raw map[string]struct {
		Info ConnectorInfo `json:"info"`
	}
	req := request{method: http.MethodGet, path: "/connectors", query: url.Values{"expand": {"info"}}, repeat: RepeatSafe}
	if _, err := c.do(ctx, req, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]ConnectorInfo, len(raw))
	for name, v := range raw {
		out[name] = v.Info
	}
	return out, nil
}
