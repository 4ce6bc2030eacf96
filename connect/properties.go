package connect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mm2cutover/mm2cutover/clientconf"
)

// OptionsFromProperties returns the client options that a properties file
// (read with clientconf.ReadProperties) sets for a Kafka Connect REST
// endpoint over HTTPS: the ssl.* keys of clientconf.TLSKeys — the worker's
// CA as a truststore, a client certificate as a keystore for workers with
// listeners.https.ssl.client.auth=required, both as PEM, JKS or PKCS12 with
// their passwords, and ssl.endpoint.identification.algorithm — written bare
// or, as in a worker's own configuration, under listeners.https. (one form
// per file). The stores are read here. Any other key is an error naming it;
// errors never show a password.
func OptionsFromProperties(props map[string]string) ([]Option, error) {
	prefix := ""
	for k := range props {
		if strings.HasPrefix(k, "listeners.https.") {
			prefix = "listeners.https."
			break
		}
	}
	var unknown []string
	for k := range props {
		name, ok := strings.CutPrefix(k, prefix)
		if !ok || (!slices.Contains(clientconf.TLSKeys, name) && !slices.Contains(clientconf.IgnoredTLSKeys, name)) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("connect: client properties: unknown keys (want ssl.* settings of the REST client): %s", strings.Join(unknown, ", "))
	}
	ts, err := clientconf.TLSFromProperties(props, prefix)
	if err != nil {
		return nil, fmt.Errorf("connect: client properties: %w", err)
	}
	cfg, err := ts.Config()
	if err != nil {
		return nil, fmt.Errorf("connect: client properties: %w", err)
	}
	return []Option{WithTLSConfig(cfg)}, nil
}
