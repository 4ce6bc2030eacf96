package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"
)

// With Config.Kerberos a secure sandbox also runs what a Kerberized
// on-premise cluster runs:
//
//   - A real MIT Kerberos KDC (Debian's krb5-kdc and krb5-admin-server:
//     krb5kdc, kdb5_util, kadmin.local), started as a process on a free
//     port of 127.0.0.1 (TCP and UDP) with its own realm (KerberosRealm),
//     database, kdc.conf and krb5.conf in the secrets directory. Clients
//     reach it over TCP (udp_preference_limit = 1); principals require
//     pre-authentication, as Active Directory's do.
//   - Every broker has one more listener, KERBEROS (SASL_SSL, GSSAPI only),
//     bound to and advertised as localhost:<port>: its service principal
//     is kafka/localhost@<realm> (KerberosServiceName). Kafka's Java
//     clients put the host as they connected to it in the principal
//     (InetAddress.getHostName), and so does package kafkaadmin; krb5.conf
//     sets dns_canonicalize_hostname and rdns false, so that neither
//     rewrites "localhost". The principal of a client is its name without
//     the realm (sasl.kerberos.principal.to.local.rules DEFAULT):
//     User:<name>.
//   - The Connect workers' own clients log in as connect@<realm>
//     (ConnectPrincipal) from a keytab, through the target's KERBEROS
//     listener, and every worker JVM runs with -Djava.security.krb5.conf
//     (KAFKA_OPTS), so that connectors' clients may use GSSAPI too.
//     Under Config.Authorizer connect is a super user, as mm2 is.
//
// Keytabs are files of the secrets directory, which Close removes. A
// client gets a principal and a keytab of its own from KerberosKeytab, or
// a password from KerberosPassword.

const (
	// KerberosRealm is the realm of a sandbox's KDC.
	KerberosRealm = "MM2CUTOVER.TEST"
	// KerberosServiceName is the brokers' sasl.kerberos.service.name: their
	// principal is kafka/localhost@KerberosRealm.
	KerberosServiceName = "kafka"
	// ConnectPrincipal is the name of the Connect workers' principal.
	ConnectPrincipal = "connect"
	// kerberosHost is the host of the KERBEROS listeners and of the
	// brokers' service principal.
	kerberosHost = "localhost"
)

// ErrNoKerberos is returned by Start when Config.Kerberos is set and the
// MIT Kerberos KDC programs cannot be found.
var ErrNoKerberos = errors.New("sandbox: MIT Kerberos is not installed (krb5kdc, kdb5_util and kadmin.local: apt-get install krb5-kdc krb5-admin-server)")

// KerberosAvailable reports whether the KDC programs a Kerberos sandbox
// runs are installed.
func KerberosAvailable() bool {
	_, err := kdcPrograms()
	return err == nil
}

// kdcPrograms finds krb5kdc, kdb5_util and kadmin.local on PATH or in the
// sbin directories PATH often leaves out.
func kdcPrograms() (map[string]string, error) {
	out := map[string]string{}
	for _, name := range []string{"krb5kdc", "kdb5_util", "kadmin.local"} {
		path, err := exec.LookPath(name)
		if err != nil {
			for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/sbin"} {
				if fi, err2 := os.Stat(filepath.Join(dir, name)); err2 == nil && fi.Mode()&0o111 != 0 {
					path, err = filepath.Join(dir, name), nil
					break
				}
			}
		}
		if err != nil {
			return nil, ErrNoKerberos
		}
		out[name] = path
	}
	return out, nil
}

// KerberosClient is a principal with its keytab.
type KerberosClient struct {
	Principal  string // name@KerberosRealm
	KeytabFile string
}

// kdc is a sandbox's MIT Kerberos KDC.
type kdc struct {
	dir      string // database, configuration and keytabs; in the secrets directory
	addr     string // 127.0.0.1:port, TCP and UDP
	krb5Conf string // the clients' krb5.conf
	programs map[string]string
	env      []string // KRB5_CONFIG and KRB5_KDC_PROFILE for the KDC's programs
	proc     *process
	mu       sync.Mutex // one kadmin.local at a time

	// The keytabs of the brokers' service principal and of the workers'.
	brokerKeytab, connectKeytab string
}

// startKDC creates a realm in dir, starts its KDC, waits until it
// accepts connections, and writes the keytabs of the brokers' service
// principal and of the workers' principal. The KDC's own log is
// dir/kdc.log.
func startKDC(ctx context.Context, dir string, log *slog.Logger) (_ *kdc, err error) {
	programs, err := kdcPrograms()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	start := time.Now()
	ports, err := freePorts("127.0.0.1", 1)
	if err != nil {
		return nil, err
	}
	k := &kdc{dir: dir, addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), krb5Conf: filepath.Join(dir, "krb5.conf"), programs: programs}
	profile := filepath.Join(dir, "kdc.conf")
	k.env = append(baseEnv(), "KRB5_CONFIG="+k.krb5Conf, "KRB5_KDC_PROFILE="+profile)
	files := map[string]string{
		profile: fmt.Sprintf(`[kdcdefaults]
 kdc_listen = %[1]s
 kdc_tcp_listen = %[1]s
[realms]
 %[2]s = {
  database_name = %[3]s/principal
  key_stash_file = %[3]s/stash
  acl_file = %[3]s/kadm5.acl
  max_life = 24h
  max_renewable_life = 7d
  default_principal_flags = +preauth
 }
[logging]
 kdc = FILE:%[3]s/kdc.log
 default = FILE:%[3]s/kdc.log
`, k.addr, KerberosRealm, dir),
		// The clients' krb5.conf: Java's (-Djava.security.krb5.conf), the
		// Go client's (KRB5_CONFIG) and the KDC's programs'.
		k.krb5Conf: fmt.Sprintf(`[libdefaults]
 default_realm = %[1]s
 dns_lookup_realm = false
 dns_lookup_kdc = false
 dns_canonicalize_hostname = false
 rdns = false
 udp_preference_limit = 1
 ticket_lifetime = 24h
 forwardable = false
[realms]
 %[1]s = {
  kdc = %[2]s
 }
[domain_realm]
 %[3]s = %[1]s
`, KerberosRealm, k.addr, kerberosHost),
		filepath.Join(dir, "kadm5.acl"): "",
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return nil, err
		}
	}
	// The master password goes to kdb5_util on its standard input (it
	// prompts twice), not on its command line; the stash file keeps the key.
	master := newSecret("kdc-master")
	if out, err := k.run(ctx, master+"\n"+master+"\n", programs["kdb5_util"], "create", "-s", "-r", KerberosRealm); err != nil {
		return nil, fmt.Errorf("sandbox: kdb5_util create: %v\n%s", err, strings.ReplaceAll(out, master, "<master password>"))
	}
	k.proc = &process{name: "kerberos kdc", argv: []string{programs["krb5kdc"], "-n", "-r", KerberosRealm}, env: k.env, dir: dir, log: filepath.Join(dir, "krb5kdc.out")}
	if err := k.proc.start(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			k.close()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := waitUntil(ctx, k.proc, func(ctx context.Context) error {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", k.addr)
		if err == nil {
			c.Close()
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("sandbox: kerberos kdc at %s not ready: %w\n%s", k.addr, err, k.tail(20))
	}
	k.brokerKeytab, k.connectKeytab = filepath.Join(dir, "kafka.keytab"), filepath.Join(dir, "connect.keytab")
	if err := k.keytab(ctx, KerberosServiceName+"/"+kerberosHost, k.brokerKeytab); err != nil {
		return nil, err
	}
	if err := k.keytab(ctx, ConnectPrincipal, k.connectKeytab); err != nil {
		return nil, err
	}
	log.Info("kerberos kdc ready", "addr", k.addr, "realm", KerberosRealm, "took", time.Since(start).Round(time.Millisecond))
	return k, nil
}

// run runs one of the KDC's programs with stdin in a new session (no
// controlling terminal: the programs read their prompts from stdin), and
// returns what it printed.
func (k *kdc) run(ctx context.Context, stdin, program string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env, cmd.Dir = k.env, k.dir
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	return out.String(), err
}

// kadmin runs kadmin.local's commands, one a line. kadmin.local exits 0
// whatever a command did: ok checks its output. secret, when not empty, is
// left out of an error.
func (k *kdc) kadmin(ctx context.Context, commands string, ok func(out string) bool, secret string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	out, err := k.run(ctx, commands, k.programs["kadmin.local"], "-r", KerberosRealm)
	if err == nil && !ok(out) {
		err = errors.New("unexpected output")
	}
	if err != nil {
		if secret != "" {
			out = strings.ReplaceAll(out, secret, "<password>")
		}
		return fmt.Errorf("sandbox: kadmin.local: %v\n%s", err, out)
	}
	return nil
}

// keytab gives principal name@realm new random keys (creating it if
// needed) and writes them to a new keytab at path. A keytab written
// earlier for the principal then holds keys the KDC no longer has.
func (k *kdc) keytab(ctx context.Context, name, path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	cmds := fmt.Sprintf("addprinc -randkey %s\nktadd -k %s %s\n", name, path, name)
	if err := k.kadmin(ctx, cmds, func(string) bool { return true }, ""); err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("sandbox: kadmin.local wrote no keytab for %s: %w", name, err)
	}
	kt := keytab.New()
	if err := kt.Unmarshal(b); err != nil || len(kt.Entries) == 0 {
		return fmt.Errorf("sandbox: the keytab kadmin.local wrote for %s holds no key (%v)", name, err)
	}
	return nil
}

func (k *kdc) tail(n int) string { return tailFile(filepath.Join(k.dir, "kdc.log"), n) }

func (k *kdc) close() {
	if k == nil || k.proc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = k.proc.stop(ctx) // krb5kdc exits at once on SIGTERM; nothing to flush
}

// kerberosPrincipal names a principal of the sandbox's realm.
func kerberosPrincipal(name string) string { return name + "@" + KerberosRealm }

// brokerPrincipal is the brokers' service principal.
func brokerPrincipal() string {
	return kerberosPrincipal(KerberosServiceName + "/" + kerberosHost)
}

// krb5JAAS is the JAAS entry of a login from a keytab, as Kafka's
// documentation gives it; serviceName is Kafka's option ("" for none).
func krb5JAAS(principal, keytabFile, serviceName string) string {
	s := fmt.Sprintf(`com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab=%q principal=%q`, keytabFile, principal)
	if serviceName != "" {
		s += fmt.Sprintf(" serviceName=%q", serviceName)
	}
	return s + ";"
}

// kdc returns the sandbox's KDC, or nil without Config.Kerberos.
func (s *Sandbox) kdc() *kdc {
	if s.sec == nil {
		return nil
	}
	return s.sec.kdc
}

// Kerberos reports whether the sandbox runs a KDC (Config.Kerberos).
func (s *Sandbox) Kerberos() bool { return s.kdc() != nil }

// Krb5Conf returns the path of the krb5.conf of the sandbox's realm (""
// without Config.Kerberos): the file Java clients take with
// -Djava.security.krb5.conf and the Go client with KRB5_CONFIG.
func (s *Sandbox) Krb5Conf() string {
	if s.kdc() == nil {
		return ""
	}
	return s.kdc().krb5Conf
}

// KDCAddr returns the host:port of the sandbox's KDC ("" without
// Config.Kerberos).
func (s *Sandbox) KDCAddr() string {
	if s.kdc() == nil {
		return ""
	}
	return s.kdc().addr
}

// KerberosKeytab gives principal name@KerberosRealm new random keys,
// creating it if needed, and returns it with a new keytab holding them (a
// file of the secrets directory). Calling it again for the same name
// leaves the earlier keytab stale: its keys no longer match the KDC's.
// Under Config.Authorizer the principal (User:name) may do only what ACLs
// allow.
func (s *Sandbox) KerberosKeytab(ctx context.Context, name string) (KerberosClient, error) {
	k := s.kdc()
	if k == nil {
		return KerberosClient{}, errors.New("sandbox: KerberosKeytab needs Config.Kerberos")
	}
	if name == "" || strings.ContainsAny(name, "@ \t\n\"'\\") {
		return KerberosClient{}, fmt.Errorf("sandbox: %q is not a principal name for KerberosKeytab", name)
	}
	path := filepath.Join(k.dir, fmt.Sprintf("%s-%d.keytab", strings.ReplaceAll(name, "/", "_"), time.Now().UnixNano()))
	if err := k.keytab(ctx, name, path); err != nil {
		return KerberosClient{}, err
	}
	return KerberosClient{Principal: kerberosPrincipal(name), KeytabFile: path}, nil
}

// KerberosPassword creates principal name@KerberosRealm with a new random
// password and returns it (User.Name is the principal).
func (s *Sandbox) KerberosPassword(ctx context.Context, name string) (User, error) {
	k := s.kdc()
	if k == nil {
		return User{}, errors.New("sandbox: KerberosPassword needs Config.Kerberos")
	}
	if name == "" || strings.ContainsAny(name, "@ \t\n\"'\\") {
		return User{}, fmt.Errorf("sandbox: %q is not a principal name for KerberosPassword", name)
	}
	u := User{Name: kerberosPrincipal(name), Password: newSecret("krb-" + strings.ReplaceAll(name, "/", "-"))}
	created := fmt.Sprintf("Principal %q created.", u.Name)
	err := k.kadmin(ctx, fmt.Sprintf("addprinc -pw %s %s\n", u.Password, name), func(out string) bool { return strings.Contains(out, created) }, u.Password)
	return u, err
}

// KerberosDelete deletes principal name@KerberosRealm from the KDC: its
// keytabs and password no longer log in (KDC_ERR_C_PRINCIPAL_UNKNOWN).
func (s *Sandbox) KerberosDelete(ctx context.Context, name string) error {
	k := s.kdc()
	if k == nil {
		return errors.New("sandbox: KerberosDelete needs Config.Kerberos")
	}
	deleted := fmt.Sprintf("Principal %q deleted.", kerberosPrincipal(name))
	return k.kadmin(ctx, fmt.Sprintf("delprinc -force %s\n", name), func(out string) bool { return strings.Contains(out, deleted) }, "")
}

// KerberosAddrs returns the KERBEROS listener of every node (SASL_SSL,
// GSSAPI; localhost:<port>), or nil without Config.Kerberos.
func (b *Broker) KerberosAddrs() []string {
	var out []string
	for _, nd := range b.nodes {
		if nd.kerberos != "" {
			out = append(out, nd.kerberos)
		}
	}
	return out
}

// brokerProps returns the lines of a node's server.properties for its
// KERBEROS listener: the listener itself is in the listener lines
// (security.brokerProps).
func (k *kdc) brokerProps() []string {
	return []string{
		"listener.name.kerberos.sasl.enabled.mechanisms=GSSAPI",
		"listener.name.kerberos.gssapi.sasl.jaas.config=" + krb5JAAS(brokerPrincipal(), k.brokerKeytab, ""),
		// Kafka requires a service name on the broker too
		// (KerberosLogin.getServiceName); no other listener uses GSSAPI.
		"sasl.kerberos.service.name=" + KerberosServiceName,
	}
}

// jvmFlag is the flag of every broker and worker JVM of a Kerberos
// sandbox: Java reads no KRB5_CONFIG.
func (k *kdc) jvmFlag() string { return "-Djava.security.krb5.conf=" + k.krb5Conf }

// workerEnv returns the environment that makes a worker's own clients log
// in as ConnectPrincipal through the target's KERBEROS listener: it
// replaces the bootstrap servers and SASL settings of the SCRAM login.
// The service name is a JAAS option, so that the worker's producer,
// consumer and admin clients (producer.*, consumer.*, admin.*), which
// share CONNECT_SASL_JAAS_CONFIG, all have it.
func (k *kdc) workerEnv(target *Broker) []string {
	return []string{
		"CONNECT_BOOTSTRAP_SERVERS=" + strings.Join(target.KerberosAddrs(), ","),
		"CONNECT_SECURITY_PROTOCOL=SASL_SSL",
		"CONNECT_SASL_MECHANISM=GSSAPI",
		"CONNECT_SASL_JAAS_CONFIG=" + krb5JAAS(kerberosPrincipal(ConnectPrincipal), k.connectKeytab, KerberosServiceName),
		"KAFKA_OPTS=" + k.jvmFlag(),
	}
}
