package connect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/redact"
)

// OptionsFromProperties returns the client options that a properties file
// (read with clientconf.ReadProperties) sets for a Kafka Connect REST
// endpoint over HTTPS: the ssl.* keys of clientconf.TLSKeys — the worker's
// CA as a truststore, a client certificate as a keystore for workers with
// listeners.https.ssl.client.auth=required, both as PEM, JKS or PKCS12 with
// their passwords, and ssl.endpoint.identification.algorithm — written bare
// or, as in a worker's own configuration, under listeners.https. (one form
// per file). The stores are read here. Any other key is not used: the
// client New makes with these options warns about such keys once, through
// its logger (WithLogger), naming them — never a value, and never a key
// that looks like key material (redact.KeyNames) — as Kafka's own clients
// do with keys they do not know. Errors never show a password.
func OptionsFromProperties(props map[string]string) ([]Option, error) {
	prefix := ""
	for k := range props {
		if strings.HasPrefix(k, "listeners.https.") {
			prefix = "listeners.https."
			break
		}
	}
	var unknown []string
	tlsProps := map[string]string{}
	for k, v := range props {
		name, ok := strings.CutPrefix(k, prefix)
		if !ok || (!slices.Contains(clientconf.TLSKeys, name) && !slices.Contains(clientconf.IgnoredTLSKeys, name)) {
			unknown = append(unknown, k)
			continue
		}
		tlsProps[k] = v
	}
	ts, err := clientconf.TLSFromProperties(tlsProps, prefix)
	if err != nil {
		return nil, fmt.Errorf("connect: client properties: %w", err)
	}
	cfg, err := ts.Config()
	if err != nil {
		return nil, fmt.Errorf("connect: client properties: %w", err)
	}
	opts := []Option{WithTLSConfig(cfg)}
	if len(unknown) > 0 {
		names := redact.KeyNames(unknown)
		opts = append(opts, option(func(s *settings) error {
			s.unknownProperties = append(s.unknownProperties, names...)
			return nil
		}))
	}
	return opts, nil
}
