package kafkaadmin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/redact"
)

const propSecret = "prop-secret-marker-8f1"

func TestConfigFromProperties(t *testing.T) {
	for _, tc := range []struct {
		name    string
		props   map[string]string
		want    Config
		ignored []string
	}{
		{"scram over TLS", map[string]string{
			"bootstrap.servers": "a:9093, b:9093", "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
			"sasl.jaas.config":    `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="` + propSecret + `";`,
			"ssl.truststore.type": "PEM", "ssl.truststore.location": "/etc/ca.pem", "acks": "all", "sasl.login.refresh.window.factor": "0.8",
		}, Config{BootstrapServers: []string{"a:9093", "b:9093"}, SecurityProtocol: SASLSSL, SASLMechanism: ScramSHA512,
			Username: "alice", Password: propSecret, TLS: TLSConfig{Stores: clientconf.TLS{TruststoreType: "PEM", TruststoreLocation: "/etc/ca.pem"}}},
			[]string{"acks", "sasl.login.refresh.window.factor"}},
		{"plain", map[string]string{"security.protocol": "sasl_plaintext", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username=bob password=` + propSecret + `;`},
			Config{SecurityProtocol: SASLPlaintext, SASLMechanism: Plain, Username: "bob", Password: propSecret}, nil},
		{"mtls with JKS", map[string]string{"security.protocol": "SSL", "ssl.keystore.location": "/k.jks", "ssl.keystore.password": propSecret,
			"ssl.key.password": propSecret, "ssl.endpoint.identification.algorithm": "", "client.id": "tool", "request.timeout.ms": "5000"},
			Config{SecurityProtocol: SSL, ClientID: "tool", RequestTimeout: 5 * time.Second, TLS: TLSConfig{Stores: clientconf.TLS{KeystoreLocation: "/k.jks",
				KeystorePassword: propSecret, KeyPassword: propSecret, SkipHostnameVerification: true}}}, nil},
		{"oauth client credentials", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
			"sasl.login.callback.handler.class":   oauthLoginHandler,
			"sasl.oauthbearer.token.endpoint.url": "https://idp/token",
			"sasl.jaas.config":                    `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="tool" clientSecret="` + propSecret + `" scope="kafka" extension_logicalCluster="lkc-1";`},
			Config{SecurityProtocol: SASLSSL, SASLMechanism: OAuthBearer, OAuth: OAuthConfig{TokenEndpointURL: "https://idp/token", ClientID: "tool",
				ClientSecret: propSecret, Scope: "kafka", Extensions: map[string]string{"logicalCluster": "lkc-1"}}}, nil},
		{"oauth client credentials, Kafka 4.1 keys", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
			"sasl.oauthbearer.token.endpoint.url": "https://idp/token", "sasl.oauthbearer.client.credentials.client.id": "tool",
			"sasl.oauthbearer.client.credentials.client.secret": propSecret, "sasl.oauthbearer.scope": "kafka",
			"sasl.jaas.config": oauthLoginModule + " required ;"},
			Config{SecurityProtocol: SASLSSL, SASLMechanism: OAuthBearer, OAuth: OAuthConfig{TokenEndpointURL: "https://idp/token", ClientID: "tool",
				ClientSecret: propSecret, Scope: "kafka"}}, nil},
		{"oauth unsecured", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
			"sasl.jaas.config": oauthLoginModule + ` required unsecuredLoginStringClaim_sub="alice";`},
			Config{SecurityProtocol: SASLPlaintext, SASLMechanism: OAuthBearer, OAuth: OAuthConfig{UnsecuredSubject: "alice"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ignored, err := ConfigFromProperties(tc.props)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Config{}, "Sarama", "Logger")); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.ignored, ignored); d != "" {
				t.Errorf("ignored (-want +got):\n%s", d)
			}
			if strings.Contains(fmt.Sprint(got), propSecret) || strings.Contains(fmt.Sprintf("%#v", got), propSecret) {
				t.Errorf("the config prints a secret: %v", got)
			}
			if tc.want.BootstrapServers == nil {
				got.BootstrapServers = []string{"h:1"}
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestConfigFromPropertiesRefuses(t *testing.T) {
	scram := `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="` + propSecret + `";`
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		// A typo is warned about (TestUnknownPropertiesWarnedOnce); what it
		// meant to set is then missing.
		{"typo", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.confg": scram}, "sasl.jaas.config: required"},
		{"gssapi by default", map[string]string{"security.protocol": "SASL_SSL", "sasl.jaas.config": scram}, "with sasl.mechanism GSSAPI: want " + krb5LoginModule},
		{"module for another mechanism", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": scram}, "want " + plainLoginModule},
		{"unknown jaas option", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
			"sasl.jaas.config": scramLoginModule + ` required username="u" pasword="` + propSecret + `";`}, "options pasword are not known"},
		{"unclosed quote", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": plainLoginModule + ` required username="u" password="` + propSecret + `;`}, "not closed"},
		{"no semicolon", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": plainLoginModule + ` required username="u" password="` + propSecret + `"`}, "does not end with ';'"},
		{"provider reference", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": "${env:JAAS}"}, "config provider reference"},
		{"config providers", map[string]string{"config.providers": "env"}, "not resolved by this tool"},
		{"sasl without sasl protocol", map[string]string{"security.protocol": "SSL", "sasl.jaas.config": scram}, "does not use SASL"},
		{"ssl without tls", map[string]string{"ssl.truststore.location": "/ca.jks", "ssl.truststore.password": propSecret}, "does not use TLS"},
		{"oauth without a source", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": oauthLoginModule + " required;"}, "needs sasl.oauthbearer.token.endpoint.url"},
		{"foreign handler", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": "https://idp/t",
			"sasl.login.callback.handler.class": "io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler",
			"sasl.jaas.config":                  oauthLoginModule + ` required clientId="c" clientSecret="` + propSecret + `";`}, "only Kafka's"},
		{"timeout", map[string]string{"request.timeout.ms": "soon"}, "request.timeout.ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ConfigFromProperties(tc.props)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an ErrInvalidConfig saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), propSecret) {
				t.Errorf("the error shows a secret: %v", err)
			}
		})
	}
}

// tokenEndpoint is an OAuth 2 token endpoint for the client credentials
// grant of one client: it answers a token naming the client, or 401.
func tokenEndpoint(t *testing.T, id, secret string, calls *atomic.Int32, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if status != 0 {
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":"server_error","error_description":"echo %s"}`, r.Header.Get("Authorization"))
			return
		}
		u, p, ok := r.BasicAuth()
		if r.Method != http.MethodPost || r.FormValue("grant_type") != "client_credentials" || !ok || u != id || p != secret {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":"invalid_client","error_description":"bad credentials %s"}`, p)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"access_token": "tok-" + u + "-" + r.FormValue("scope"), "token_type": "bearer", "expires_in": 300})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestTokenSource(t *testing.T) {
	var calls atomic.Int32
	srv := tokenEndpoint(t, "tool", propSecret, &calls, 0)
	ts := newTokenSource(OAuthConfig{TokenEndpointURL: srv.URL, ClientID: "tool", ClientSecret: propSecret, Scope: "kafka"}, nil, 5*time.Second)
	ctx := context.Background()
	now := time.Now()
	for i, at := range []time.Time{now, now.Add(time.Minute), now.Add(5 * time.Minute)} {
		tok, err := ts.get(ctx, at)
		if err != nil || tok != "tok-tool-kafka" {
			t.Fatalf("token %d: %q, %v", i, tok, err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d requests to the endpoint, want 2: one token, then a new one near its expiry", n)
	}

	wrong := newTokenSource(OAuthConfig{TokenEndpointURL: srv.URL, ClientID: "tool", ClientSecret: "wrong-" + propSecret}, nil, 5*time.Second)
	_, err := wrong.get(ctx, now)
	var te *TokenEndpointError
	if !errors.As(err, &te) || !errors.Is(err, ErrAuthentication) || te.StatusCode != 401 || retriable(err) {
		t.Fatalf("wrong secret: %v, want a TokenEndpointError matching ErrAuthentication, not retried", err)
	}
	if strings.Contains(err.Error(), propSecret) {
		t.Errorf("the error shows the secret: %v", err)
	}
	if se := saslError("b:9093", "tool", "OAUTHBEARER", err); se == nil || !errors.Is(se, ErrAuthentication) {
		t.Errorf("saslError: %v", se)
	}

	down := tokenEndpoint(t, "", "", &calls, http.StatusServiceUnavailable)
	echo := newTokenSource(OAuthConfig{TokenEndpointURL: down.URL, ClientID: "tool", ClientSecret: propSecret}, nil, 5*time.Second)
	_, err = echo.get(ctx, now)
	if err == nil || !retriable(err) {
		t.Fatalf("503: %v, want an error worth a retry", err)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("tool:" + propSecret))
	if strings.Contains(err.Error(), basic) || strings.Contains(err.Error(), propSecret) {
		t.Errorf("the error shows the credentials an endpoint echoed: %v", err)
	}
}

func TestUnsecuredJWS(t *testing.T) {
	now := time.Unix(1700000000, 0)
	tok := UnsecuredJWS("alice", now, time.Hour)
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[2] != "" {
		t.Fatalf("%q: want header.claims. with an empty signature", tok)
	}
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	c, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if string(h) != `{"alg":"none"}` || string(c) != `{"exp":1700003600,"iat":1700000000,"sub":"alice"}` {
		t.Errorf("header %s, claims %s", h, c)
	}
}

func TestOAuthConfigValidate(t *testing.T) {
	base := Config{BootstrapServers: []string{"h:1"}, SecurityProtocol: SASLSSL, SASLMechanism: OAuthBearer}
	for _, tc := range []struct {
		name string
		c    func(Config) Config
		ok   bool
	}{
		{"endpoint", func(c Config) Config {
			c.OAuth = OAuthConfig{TokenEndpointURL: "https://idp/t", ClientID: "a", ClientSecret: "b"}
			return c
		}, true},
		{"no source", func(c Config) Config { return c }, false},
		{"password", func(c Config) Config {
			c.OAuth, c.Username, c.Password = OAuthConfig{UnsecuredSubject: "a"}, "u", redact.Secret("p")
			return c
		}, false},
		{"endpoint with user info", func(c Config) Config {
			c.OAuth = OAuthConfig{TokenEndpointURL: "https://x:y@idp/t", ClientID: "a", ClientSecret: "b"}
			return c
		}, false},
		{"oauth with scram", func(c Config) Config {
			c.SASLMechanism, c.Username, c.Password, c.OAuth = ScramSHA512, "u", "p", OAuthConfig{UnsecuredSubject: "a"}
			return c
		}, false},
	} {
		err := tc.c(base).Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
