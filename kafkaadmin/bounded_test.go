package kafkaadmin

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mm2cutover/mm2cutover/clientconf"
)

// TestF4TLSFilesBounded: the CA, certificate and key files of TLSConfig
// were read whole (os.ReadFile): /dev/zero filled the memory. They are
// read up to clientconf.MaxFileSize.
func TestF4TLSFilesBounded(t *testing.T) {
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
		for name, tc := range map[string]TLSConfig{
			"CAFile":   {CAFile: file},
			"CertFile": {CertFile: file, KeyFile: "key.pem"},
			"KeyFile":  {CertFile: "../clientconf/testdata/client.pem", KeyFile: file},
		} {
			_, err := NewClient(Config{BootstrapServers: []string{"127.0.0.1:1"}, SecurityProtocol: SSL, TLS: tc})
			if !errors.Is(err, clientconf.ErrTooLarge) {
				// Fatal: the next case would be /dev/zero, read whole.
				t.Fatalf("%s %s: %v, want an error matching clientconf.ErrTooLarge", name, file, err)
			}
		}
	}
}
