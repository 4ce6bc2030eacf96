package kafkaadmin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/mm2cutover/mm2cutover/redact"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{BootstrapServers: []string{"127.0.0.1:9092"}}
	tests := []struct {
		name  string
		edit  func(*Config)
		field string // "" means valid
	}{
		{"plaintext", func(*Config) {}, ""},
		{"no servers", func(c *Config) { c.BootstrapServers = nil }, "BootstrapServers"},
		{"no port", func(c *Config) { c.BootstrapServers = []string{"kafka"} }, "BootstrapServers"},
		{"bad port", func(c *Config) { c.BootstrapServers = []string{"kafka:0"} }, "BootstrapServers"},
		{"ipv6", func(c *Config) { c.BootstrapServers = []string{"[::1]:9092"} }, ""},
		{"unknown protocol", func(c *Config) { c.SecurityProtocol = "TLS" }, "SecurityProtocol"},
		{"sasl ok", func(c *Config) {
			c.SecurityProtocol, c.SASLMechanism, c.Username, c.Password = SASLSSL, ScramSHA512, "u", "p"
		}, ""},
		{"sasl no mechanism", func(c *Config) { c.SecurityProtocol, c.Username, c.Password = SASLPlaintext, "u", "p" }, "SASLMechanism"},
		{"sasl bad mechanism", func(c *Config) {
			c.SecurityProtocol, c.SASLMechanism, c.Username, c.Password = SASLPlaintext, "AWS_MSK_IAM", "u", "p"
		}, "SASLMechanism"},
		{"sasl no user", func(c *Config) { c.SecurityProtocol, c.SASLMechanism, c.Password = SASLPlaintext, Plain, "p" }, "Username"},
		{"sasl no password", func(c *Config) { c.SecurityProtocol, c.SASLMechanism, c.Username = SASLPlaintext, Plain, "u" }, "Password"},
		{"sasl settings without sasl", func(c *Config) { c.Username = "u" }, "SASLMechanism"},
		{"tls settings without tls", func(c *Config) { c.TLS.CAFile = "ca.pem" }, "TLS"},
		{"cert without key", func(c *Config) { c.SecurityProtocol, c.TLS.CertFile = SSL, "c.pem" }, "TLS.CertFile"},
		{"ssl with server name", func(c *Config) { c.SecurityProtocol, c.TLS.ServerName = SSL, "kafka" }, ""},
		{"negative timeout", func(c *Config) { c.RequestTimeout = -1 }, "RequestTimeout"},
		{"negative retry", func(c *Config) { c.RetryTimeout = -1 }, "RetryTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			err := c.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate() = %v, want a *ConfigError matching ErrInvalidConfig", err)
			}
			if ce.Field != tt.field {
				t.Errorf("Field = %q, want %q", ce.Field, tt.field)
			}
		})
	}
}

func TestNewClientMissingCAFile(t *testing.T) {
	_, err := NewClient(Config{BootstrapServers: []string{"h:1"}, SecurityProtocol: SSL, TLS: TLSConfig{CAFile: "/nonexistent/ca.pem"}})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "TLS.CAFile" {
		t.Fatalf("NewClient() = %v, want a *ConfigError for TLS.CAFile", err)
	}
}

// TestNewClientRunsTheSaramaHook: a Config.Sarama function that fails, or
// that completes the settings into ones sarama rejects, is a *ConfigError
// of NewClient, before any call; one that succeeds builds a client.
func TestNewClientRunsTheSaramaHook(t *testing.T) {
	boom := errors.New("no token")
	for _, tt := range []struct {
		name  string
		hook  func(*sarama.Config) error
		field string
		is    error
	}{
		{"fails", func(*sarama.Config) error { return boom }, "Sarama", boom},
		{"invalid settings", func(c *sarama.Config) error { c.Net.SASL.Enable = true; c.Net.SASL.Mechanism = "NONSENSE"; return nil }, "Config", nil},
		{"succeeds", func(c *sarama.Config) error { c.Net.KeepAlive = time.Minute; return nil }, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewClient(Config{BootstrapServers: []string{"h:1"}, Sarama: tt.hook})
			if tt.field == "" {
				if err != nil || r == nil {
					t.Fatalf("NewClient() = %v, %v; want a client", r, err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("NewClient() error = %v, want a *ConfigError for %s", err, tt.field)
			}
		})
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	const pw = "hunter2-very-secret"
	c := Config{
		BootstrapServers: []string{"h:1"}, SecurityProtocol: SASLSSL,
		SASLMechanism: Plain, Username: "alice", Password: pw,
	}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "cfg", c, "pw", c.Password)
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"String": c.String(),
		"%v":     fmt.Sprintf("%v", c),
		"%+v":    fmt.Sprintf("%+v", c),
		"%#v":    fmt.Sprintf("%#v", c),
		"%s pw":  fmt.Sprintf("pw=%s", c.Password),
		"%q pw":  fmt.Sprintf("%q", c.Password),
		"%#v pw": fmt.Sprintf("%#v", c.Password),
		"%v ptr": fmt.Sprintf("%v", &c),
		"slog":   logged.String(),
		"json":   string(js),
	}
	for name, out := range outputs {
		if strings.Contains(out, pw) {
			t.Errorf("%s shows the password: %s", name, out)
		}
		if !strings.Contains(out, redact.Redacted) {
			t.Errorf("%s does not say the password is redacted: %s", name, out)
		}
	}
	if got := (redact.Secret("")).String(); got != "" {
		t.Errorf("empty Secret String() = %q, want empty", got)
	}
	if !strings.Contains(c.String(), "alice") {
		t.Errorf("String() = %s, want the user name shown", c.String())
	}
}
