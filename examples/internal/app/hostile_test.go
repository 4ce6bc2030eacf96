package app

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/examples/internal/settings"
	"github.com/mm2cutover/mm2cutover/redact"
)

// -request-timeout bounds each request to Flink's REST API too: a
// JobManager that accepts the connection and never answers fails the
// precheck's flink-stopped check instead of stalling it.
func TestF3RequestTimeoutAppliesToFlink(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // never answered
		}
	}()
	c, err := flinkClient(settings.Settings{FlinkREST: "http://" + l.Addr().String(), RequestTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Job(context.Background(), "j1"); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v, want the request timeout", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("no answer and no error a minute after a 100 ms -request-timeout")
	}
}

// pemKey returns the lines of a private key (the clientconf test key).
func pemKey(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "clientconf", "testdata", "client.pem"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	end := strings.Index(s, "-----END PRIVATE KEY-----") + len("-----END PRIVATE KEY-----")
	return strings.Split(s[:end], "\n")
}

// showsKey reports whether s shows a line of the key or its armor.
func showsKey(s string, lines []string) bool {
	for _, l := range lines {
		if len(l) >= 12 && strings.Contains(s, l[:12]) {
			return true
		}
	}
	return strings.Contains(s, "PRIVATE KEY")
}

// settingsWith parses the flags every step needs and args.
func settingsWith(t *testing.T, args ...string) (settings.Settings, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := settings.BindFlags(fs)
	base := []string{"-source-bootstrap", "s:1", "-target-bootstrap", "t:1", "-connect-url", "https://c:1", "-connector", "c", "-group", "g", "-topics", "t"}
	if err := fs.Parse(append(base, args...)); err != nil {
		t.Fatal(err)
	}
	return f.Settings()
}

// TestF2KeyMaterialNeverEchoed: a private key pasted into any of the
// properties files the tool reads, without a '\' at the end of each line,
// is refused as settings (exit 2), and the error shows no line of it: the
// three client-config flags, whose "unknown keys" error listed the lines,
// and -mm2-source-client, -mm2-target-client and -connector-properties,
// whose keys went into the plan, the dry run and the connector sent to
// Connect. A -config file with the key pasted does not show it either.
func TestF2KeyMaterialNeverEchoed(t *testing.T) {
	lines := pemKey(t)
	pasted := settingsFile(t, "security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.key="+strings.Join(lines, "\n")+"\n")
	for _, flagName := range []string{"-source-client-config", "-target-client-config", "-connect-client-config",
		"-mm2-source-client", "-mm2-target-client", "-connector-properties", "-config"} {
		t.Run(flagName, func(t *testing.T) {
			file := pasted
			if flagName == "-config" {
				// A body line ending in '=' padding reads as a key.
				file = settingsFile(t, "MM2CUTOVER_GROUP=g\n"+lines[1]+"==\n"+strings.Join(lines[2:], "\n")+"\n")
			}
			_, err := settingsWith(t, flagName, file)
			if !errors.Is(err, settings.ErrSettings) || ExitStatus(err) != ExitUsage {
				t.Fatalf("%v, want a settings error (exit 2)", err)
			}
			if showsKey(err.Error(), lines) {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
	// The same key as a value under a key no rule knows, continued as Java
	// reads it: it is one value, redacted wherever the configuration is
	// shown (the dry run; the plan records redact.Config's form).
	continued := settingsFile(t, "x.custom.pem="+strings.Join(lines, "\\n\\\n")+"\n")
	s, err := settingsWith(t, "-connector-properties", continued)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.ConnectorConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cfg["x.custom.pem"], "-----BEGIN PRIVATE KEY-----\n") {
		t.Fatalf("x.custom.pem = %.40q", cfg["x.custom.pem"])
	}
	c, err := connect.New("http://127.0.0.1:1", connect.WithRetry(connect.Retry{Attempts: 1})) // Validate fails: the fallback
	if err != nil {
		t.Fatal(err)
	}
	s.Logger = slog.New(slog.DiscardHandler)
	shown := RedactConfig(context.Background(), &Env{Connect: c}, s, cfg)
	if shown["x.custom.pem"] != redact.Redacted || showsKey(fmt.Sprint(shown), lines) {
		t.Errorf("the dry run shows x.custom.pem = %.40q", shown["x.custom.pem"])
	}
}

// TestUnknownClientPropertiesWarnedOnce: an ordinary client.properties
// with a key the tool does not know is not refused whole (Kafka's own tools
// warn and go on): opening the clients warns once, through the settings'
// logger, naming the key and never its value.
func TestUnknownClientPropertiesWarnedOnce(t *testing.T) {
	file := settingsFile(t, "bootstrap.servers=k:9093\nsecurity.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"pw-marker-2\";\n"+
		"schema.registry.url=http://sr:8081\nbasic.auth.user.info=u:pw-marker-3\n")
	s, err := settingsWith(t, "-source-bootstrap", "", "-source-client-config", file)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if _, err := Open(s); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "basic.auth.user.info, schema.registry.url") {
		t.Errorf("%d warnings, want one naming the keys:\n%s", n, out)
	}
	if strings.Contains(out, "pw-marker") || strings.Contains(out, "sr:8081") {
		t.Errorf("a value is shown:\n%s", out)
	}
}

// TestF4ConnectCABounded: -connect-ca was read whole (os.ReadFile):
// /dev/zero filled the memory. It is read up to clientconf.MaxFileSize, as
// -source-tls-ca and -target-tls-ca are (kafkaadmin's TestF4TLSFilesBounded).
func TestF4ConnectCABounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.pem")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 * clientconf.MaxFileSize); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	files := []string{big}
	if _, err := os.Stat("/dev/zero"); err == nil {
		files = append(files, "/dev/zero")
	}
	for _, file := range files {
		_, err := OpenConnect(settings.Settings{ConnectURL: "https://c:1", ConnectCAFile: file, Logger: slog.New(slog.DiscardHandler)})
		if !errors.Is(err, clientconf.ErrTooLarge) || !errors.Is(err, settings.ErrSettings) {
			// Fatal: the next file would be /dev/zero, read whole.
			t.Fatalf("-connect-ca %s: %v, want an error matching clientconf.ErrTooLarge", file, err)
		}
	}
}

// settingsFile writes text to a file of t's and returns its path.
func settingsFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cutover.env")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
