package kafkaadmin

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/redact"
)

// OAuthConfig configures SASL OAUTHBEARER (SASLMechanism [OAuthBearer]),
// in one of the two ways Kafka's own clients log in:
//
//   - a token endpoint (sasl.oauthbearer.token.endpoint.url with Kafka's
//     OAuthBearerLoginCallbackHandler): the OAuth 2 client credentials
//     grant, with ClientID and ClientSecret sent as HTTP basic
//     authentication and Scope, as Kafka's ClientCredentialsAccessTokenRetriever
//     does (JAAS options clientId, clientSecret, scope);
//   - Kafka's unsecured tokens (OAuthBearerUnsecuredLoginCallbackHandler,
//     the default without a token endpoint): a JWS with "alg":"none" whose
//     subject is UnsecuredSubject (JAAS option unsecuredLoginStringClaim_sub),
//     for brokers whose listener validates with
//     OAuthBearerUnsecuredValidatorCallbackHandler — test and development
//     clusters only.
type OAuthConfig struct {
	TokenEndpointURL string
	ClientID         string
	ClientSecret     redact.Secret
	Scope            string
	UnsecuredSubject string
	// Extensions are SASL extensions sent with the token (JAAS options
	// extension_<name>, or unsecuredLoginExtension_<name>).
	Extensions map[string]string
}

// IsZero reports whether o sets nothing.
func (o OAuthConfig) IsZero() bool {
	return o.TokenEndpointURL == "" && o.ClientID == "" && o.ClientSecret == "" && o.Scope == "" && o.UnsecuredSubject == "" && len(o.Extensions) == 0
}

func (o OAuthConfig) validate() error {
	switch {
	case o.TokenEndpointURL != "" && o.UnsecuredSubject != "":
		return &ConfigError{Field: "OAuth", Reason: "TokenEndpointURL and UnsecuredSubject exclude each other"}
	case o.TokenEndpointURL != "":
		u, err := url.Parse(o.TokenEndpointURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return &ConfigError{Field: "OAuth.TokenEndpointURL", Reason: "want an absolute http or https URL"}
		}
		if u.User != nil {
			return &ConfigError{Field: "OAuth.TokenEndpointURL", Reason: "holds credentials: give ClientID and ClientSecret"}
		}
		if o.ClientID == "" || o.ClientSecret == "" {
			return &ConfigError{Field: "OAuth.ClientID", Reason: "ClientID and ClientSecret are required with a token endpoint"}
		}
	case o.UnsecuredSubject != "":
		if o.ClientID != "" || o.ClientSecret != "" || o.Scope != "" {
			return &ConfigError{Field: "OAuth.ClientID", Reason: "client credentials need a TokenEndpointURL"}
		}
	default:
		return &ConfigError{Field: "OAuth", Reason: "OAUTHBEARER needs a TokenEndpointURL (client credentials) or an UnsecuredSubject"}
	}
	for k := range o.Extensions {
		if k == "auth" || k == "" || strings.ContainsAny(k, "\x01=") {
			return &ConfigError{Field: "OAuth.Extensions", Reason: fmt.Sprintf("%q is not a valid extension name", k)}
		}
	}
	return nil
}

// tokenSource fetches and caches the access token of a Client: one token
// serves every connection until shortly before it expires.
type tokenSource struct {
	cfg  OAuthConfig
	http *http.Client

	mu      sync.Mutex
	token   string
	expires time.Time
}

func newTokenSource(cfg OAuthConfig, tc *tls.Config, timeout time.Duration) *tokenSource {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tc != nil {
		c := tc.Clone()
		c.Certificates, c.ServerName = nil, "" // the broker's client certificate and name are not the endpoint's
		tr.TLSClientConfig = c
	}
	return &tokenSource{cfg: cfg, http: &http.Client{Transport: tr, Timeout: timeout}}
}

// provider returns the sarama token provider of one call, bound to its
// context.
func (ts *tokenSource) provider(ctx context.Context) sarama.AccessTokenProvider {
	return callTokens{ctx: ctx, ts: ts}
}

type callTokens struct {
	ctx context.Context
	ts  *tokenSource
}

func (c callTokens) Token() (*sarama.AccessToken, error) {
	tok, err := c.ts.get(c.ctx, time.Now())
	if err != nil {
		return nil, err
	}
	return &sarama.AccessToken{Token: tok, Extensions: maps.Clone(c.ts.cfg.Extensions)}, nil
}

// refreshBefore is how long before its expiry a token is replaced.
const refreshBefore = 30 * time.Second

func (ts *tokenSource) get(ctx context.Context, now time.Time) (string, error) {
	if ts.cfg.UnsecuredSubject != "" {
		return UnsecuredJWS(ts.cfg.UnsecuredSubject, now, time.Hour), nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.token != "" && now.Add(refreshBefore).Before(ts.expires) {
		return ts.token, nil
	}
	tok, life, err := ts.fetch(ctx)
	if err != nil {
		return "", err
	}
	ts.token, ts.expires = tok, now.Add(life)
	return tok, nil
}

// maxTokenAnswer bounds the token endpoint's answer.
const maxTokenAnswer = 1 << 20

// TokenEndpointError is a token endpoint's refusal of the client
// credentials (HTTP 400, 401 or 403). It matches [ErrAuthentication] and
// never holds the client secret.
type TokenEndpointError struct {
	URL        string
	StatusCode int
	Message    string // the endpoint's error and error_description, or the start of its body
}

func (e *TokenEndpointError) Error() string {
	return fmt.Sprintf("kafkaadmin: token endpoint %s refused the client credentials: HTTP %d: %s", e.URL, e.StatusCode, e.Message)
}

// Is matches ErrAuthentication.
func (e *TokenEndpointError) Is(target error) bool { return target == ErrAuthentication }

// ErrorKind is errkind.Rejected: the token endpoint refused the client.
func (e *TokenEndpointError) ErrorKind() errkind.Kind { return errkind.Rejected }

func (ts *tokenSource) fetch(ctx context.Context) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if ts.cfg.Scope != "" {
		form.Set("scope", ts.cfg.Scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.cfg.TokenEndpointURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(ts.cfg.ClientID, string(ts.cfg.ClientSecret))
	resp, err := ts.http.Do(req)
	if err != nil {
		// The URL error holds the endpoint, never the secret (it is in a
		// header).
		return "", 0, fmt.Errorf("token endpoint: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenAnswer))
	if err != nil {
		return "", 0, fmt.Errorf("token endpoint: %w", err)
	}
	secrets := []string{string(ts.cfg.ClientSecret), base64.StdEncoding.EncodeToString([]byte(ts.cfg.ClientID + ":" + string(ts.cfg.ClientSecret)))}
	var answer struct {
		AccessToken string      `json:"access_token"`
		ExpiresIn   json.Number `json:"expires_in"`
		Error       string      `json:"error"`
		Description string      `json:"error_description"`
	}
	jsonErr := json.Unmarshal(body, &answer)
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(answer.Error + " " + answer.Description)
		if jsonErr != nil || msg == "" {
			msg = strings.TrimSpace(string(body[:min(len(body), 200)]))
		}
		msg = redact.Text(msg, secrets...)
		switch resp.StatusCode {
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
			return "", 0, &TokenEndpointError{URL: ts.cfg.TokenEndpointURL, StatusCode: resp.StatusCode, Message: msg}
		}
		return "", 0, fmt.Errorf("token endpoint %s: HTTP %d: %s: %w", ts.cfg.TokenEndpointURL, resp.StatusCode, msg, errTokenEndpoint)
	}
	if jsonErr != nil || answer.AccessToken == "" {
		return "", 0, fmt.Errorf("token endpoint %s: the answer holds no access_token", ts.cfg.TokenEndpointURL)
	}
	life := time.Hour
	if n, err := answer.ExpiresIn.Int64(); err == nil && n > 0 {
		life = time.Duration(n) * time.Second
	}
	return answer.AccessToken, life, nil
}

// errTokenEndpoint marks a token endpoint's answer worth a retry (a 5xx).
var errTokenEndpoint = errkind.New(errkind.Retry, "kafkaadmin: token endpoint unavailable")

// UnsecuredJWS returns a token of Kafka's unsecured OAUTHBEARER login
// (OAuthBearerUnsecuredLoginCallbackHandler): a JWS with header
// {"alg":"none"}, the claims sub, iat and exp, and an empty signature. A
// broker listener with OAuthBearerUnsecuredValidatorCallbackHandler (the
// default) accepts it and takes sub as the principal. Never use it against
// a production cluster: anyone can make one.
func UnsecuredJWS(subject string, now time.Time, life time.Duration) string {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"none"}`))
	claims, _ := json.Marshal(map[string]any{"sub": subject, "iat": now.Unix(), "exp": now.Add(life).Unix()}) // cannot fail
	return header + "." + enc.EncodeToString(claims) + "."
}

// extensionNames returns the extension names in order, for String.
func extensionNames(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
