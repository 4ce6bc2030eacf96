package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/redact"
)

// secureJob is what a job needs on a secure sandbox (-secure): SASL_SSL
// with SCRAM-SHA-512 as each cluster's admin, the sandbox CA, Connect over
// HTTPS with basic auth, and MirrorSourceConnector's client settings
// (their JAAS lines are references to the workers' environment). The
// passwords reach a child on its stdin and the command line in its
// environment, never a file.
type secureJob struct {
	CAFile                       string `json:"ca_file"`
	SourceUser, SourcePassword   string
	TargetUser, TargetPassword   string
	ConnectUser, ConnectPassword string
	SourceClient, TargetClient   map[string]string
	SourceProps, TargetProps     string // the -mm2-source-client and -mm2-target-client files
}

// newSecureJob reads a secure sandbox's credentials and writes the
// command line's -mm2-*-client files into dir; nil for a plain sandbox.
func newSecureJob(sb *sandbox.Sandbox, dir string) (*secureJob, error) {
	if !sb.Secure() {
		return nil, nil
	}
	sj := &secureJob{
		CAFile:     sb.CAFile(),
		SourceUser: sb.Source().Admin().Name, SourcePassword: sb.Source().Admin().Password,
		TargetUser: sb.Target().Admin().Name, TargetPassword: sb.Target().Admin().Password,
		ConnectUser: sb.ConnectUser().Name, ConnectPassword: sb.ConnectUser().Password,
		SourceClient: map[string]string{}, TargetClient: map[string]string{},
	}
	for k, v := range sb.MirrorClientConfig() {
		if rest, ok := strings.CutPrefix(k, "source.cluster."); ok {
			sj.SourceClient[rest] = v
		} else if rest, ok := strings.CutPrefix(k, "target.cluster."); ok {
			sj.TargetClient[rest] = v
		}
	}
	sj.SourceProps, sj.TargetProps = filepath.Join(dir, "mm2-source.properties"), filepath.Join(dir, "mm2-target.properties")
	for path, m := range map[string]map[string]string{sj.SourceProps: sj.SourceClient, sj.TargetProps: sj.TargetClient} {
		var lines []string
		for k, v := range m {
			lines = append(lines, k+"="+v)
		}
		sort.Strings(lines)
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			return nil, err
		}
	}
	return sj, nil
}

// kafkaConfig is the tool's client settings for one cluster of the job.
func (j job) kafkaConfig(bootstrap, clientID string, source bool) kafkaadmin.Config {
	c := kafkaadmin.Config{BootstrapServers: []string{bootstrap}, ClientID: clientID}
	if sj := j.Secure; sj != nil {
		user, pass := sj.TargetUser, sj.TargetPassword
		if source {
			user, pass = sj.SourceUser, sj.SourcePassword
		}
		c.SecurityProtocol, c.SASLMechanism = kafkaadmin.SASLSSL, kafkaadmin.ScramSHA512
		c.Username, c.Password = user, redact.Secret(pass)
		c.TLS.CAFile = sj.CAFile
	}
	return c
}

// cliFlags are the command line's security flags and environment.
func (j job) cliFlags() (flags, env []string) {
	sj := j.Secure
	if sj == nil {
		return nil, nil
	}
	flags = []string{
		"-source-security-protocol", "SASL_SSL", "-source-sasl-mechanism", "SCRAM-SHA-512", "-source-sasl-username", sj.SourceUser, "-source-tls-ca", sj.CAFile,
		"-target-security-protocol", "SASL_SSL", "-target-sasl-mechanism", "SCRAM-SHA-512", "-target-sasl-username", sj.TargetUser, "-target-tls-ca", sj.CAFile,
		"-connect-user", sj.ConnectUser, "-connect-ca", sj.CAFile,
		"-mm2-source-client", sj.SourceProps, "-mm2-target-client", sj.TargetProps,
	}
	env = []string{
		"MM2CUTOVER_SOURCE_SASL_PASSWORD=" + sj.SourcePassword,
		"MM2CUTOVER_TARGET_SASL_PASSWORD=" + sj.TargetPassword,
		"MM2CUTOVER_CONNECT_PASSWORD=" + sj.ConnectPassword,
	}
	return flags, env
}

// tlsConfig trusts the sandbox CA.
func (sj *secureJob) tlsConfig() (*tls.Config, error) {
	pem, err := os.ReadFile(sj.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", sj.CAFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// rawSecurity completes the raw floor's sarama settings for a secure
// sandbox: SCRAM-SHA-512 as the source's admin, TLS done by the counting
// dialer d (so that it counts Kafka frames, as kafkaadmin's meter does).
func (j job) rawSecurity(conf *sarama.Config, d *countingDialer) error {
	sj := j.Secure
	if sj == nil {
		return nil
	}
	tc, err := sj.tlsConfig()
	if err != nil {
		return err
	}
	d.tls = tc
	conf.Net.SASL.Enable, conf.Net.SASL.Handshake = true, true
	conf.Net.SASL.Version = sarama.SASLHandshakeV1
	conf.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
	conf.Net.SASL.User, conf.Net.SASL.Password = sj.SourceUser, sj.SourcePassword
	conf.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{} }
	return nil
}

// httpClient is the raw floor's Connect client: the sandbox CA and basic
// auth on a secure sandbox.
func (j job) httpClient() (*http.Client, error) {
	sj := j.Secure
	if sj == nil {
		return http.DefaultClient, nil
	}
	tc, err := sj.tlsConfig()
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: basicAuth{user: sj.ConnectUser, pass: sj.ConnectPassword,
		next: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true}}}, nil
}

type basicAuth struct {
	user, pass string
	next       http.RoundTripper
}

func (b basicAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.SetBasicAuth(b.user, b.pass)
	return b.next.RoundTrip(r)
}

// scramClient is SCRAM-SHA-512 for sarama (github.com/xdg-go/scram, the
// unprepped client, as Kafka does not SASLprep).
type scramClient struct{ conv *scram.ClientConversation }

func (c *scramClient) Begin(user, password, authzID string) error {
	cl, err := scram.SHA512.NewClientUnprepped(user, password, authzID)
	if err != nil {
		return err
	}
	c.conv = cl.NewConversation()
	return nil
}

func (c *scramClient) Step(challenge string) (string, error) { return c.conv.Step(challenge) }
func (c *scramClient) Done() bool                            { return c.conv.Done() }
