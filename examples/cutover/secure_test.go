//go:build sandbox

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mm2cutover/mm2cutover/examples/internal/app"
	"github.com/mm2cutover/mm2cutover/internal/sandbox"
	"github.com/mm2cutover/mm2cutover/internal/sandbox/sandboxtest"
)

// TestSecureCutover is the cutover acceptance on the secure sandbox, every
// step through the command line: source (three brokers) and target on
// SASL_SSL with SCRAM-SHA-512, Connect over HTTPS with basic auth, the
// connector's clients on SASL_SSL with their passwords inline and marker
// values in other password-type settings (the OAUTHBEARER passphrase and
// client secret, unused with SCRAM). precheck, plan, apply, the read-back,
// resume, the verification after resume, status, the check of every record
// on the target, the rollback after resume, and the Job (examples/job,
// built and run as a process) on the same clusters. Then no password —
// the Kafka users', the REST user's, the markers — may appear in anything
// they printed or wrote: stdout, stderr (logs and errors), -json output,
// the plan, the reverse plan, the audit file, the Job's output.
func TestSecureCutover(t *testing.T) {
	sb := sandboxtest.SharedSecure(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	prefix := "sec" + strconv.FormatInt(time.Now().UnixNano()%1e6, 36) + "-"
	var out, errb bytes.Buffer
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	sc, err := newSecureScenario(sb, prefix, true, t.Setenv, &out, &errb, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sc.dir) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stdout of the steps:\n%s\nstderr of the steps:\n%s", out.String(), errb.String())
		}
	})
	start := time.Now()
	if err := sc.start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sc.cutover(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.deleteConnector(context.WithoutCancel(ctx), sc.connector) })
	res, err := sc.check(ctx)
	if err != nil {
		t.Fatalf("%v (%+v)", err, res)
	}
	t.Logf("%d source records, every one once on the target", res.Records)
	if err := sc.rollback(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("cutover, check and rollback through the command line: %v", time.Since(start).Round(time.Second))

	// The Job on the same clusters, for another connector: it builds its
	// plan from the group (now C') and applies it.
	job := buildJob(t)
	jobConnector := sc.connector + "-job"
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range sc.passwords() {
		env = append(env, k+"="+v)
	}
	flags := sc.flags()
	for i := 0; i+1 < len(flags); i += 2 {
		name, value := strings.TrimPrefix(flags[i], "-"), flags[i+1]
		switch name {
		case "plan":
			continue // the Job builds its own plan
		case "connector":
			value = jobConnector
		}
		env = append(env, "MM2CUTOVER_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))+"="+value)
	}
	jobStart := time.Now()
	cmd := exec.CommandContext(ctx, job)
	cmd.Env = env
	var jobOut, jobErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &jobOut, &jobErr
	err = cmd.Run()
	t.Logf("the Job: %v after %v; its result: %s", err, time.Since(jobStart).Round(100*time.Millisecond), strings.TrimSpace(jobOut.String()))
	t.Cleanup(func() { _ = sc.deleteConnector(context.WithoutCancel(ctx), jobConnector) })
	if err != nil || !strings.Contains(jobOut.String(), `"result":"applied"`) {
		t.Fatalf("the Job: %v\nstdout:\n%s\nstderr:\n%s", err, jobOut.String(), jobErr.String())
	}
	if !strings.Contains(jobErr.String(), `"step":"create"`) || !strings.Contains(jobErr.String(), "sasl.oauthbearer.assertion.private.key.passphrase") {
		t.Errorf("the Job's stderr has no create record with the client settings:\n%s", jobErr.String())
	}

	// The secret scan.
	secrets := secretForms(sc)
	outputs := map[string]string{"job stdout": jobOut.String(), "job stderr": jobErr.String()}
	for i, st := range sc.steps {
		outputs[fmt.Sprintf("step %d (%s) stdout", i, st.Args[0])] = st.Stdout
		outputs[fmt.Sprintf("step %d (%s) stderr", i, st.Args[0])] = st.Stderr
	}
	files := 0
	err = filepath.WalkDir(sc.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".properties") { // the inputs hold them, as a Secret would
			return err
		}
		b, err := os.ReadFile(path)
		outputs[filepath.Base(path)] = string(b)
		files++
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"plan.json", "plan.audit.jsonl", "plan.reverse.json"} {
		if _, ok := outputs[want]; !ok {
			t.Errorf("no %s written", want)
		}
	}
	scanned := 0
	for what, text := range outputs {
		scanned += len(text)
		assertNoSecret(t, what, text, secrets)
	}
	t.Logf("scanned %d outputs (%d steps, %d files, the Job's), %d bytes, for %d secret values and their encodings: none found",
		len(outputs), len(sc.steps), files, scanned, len(secrets))

	// apply -dry-run showed the configuration, redacted, and wrote
	// nothing: the apply after it created the connector.
	checkDryRun(t, sc)

	// What the scan relies on: the secrets did reach the connector, and the
	// audit recorded the client settings, redacted.
	audit := outputs["plan.audit.jsonl"]
	for _, key := range []string{"source.cluster.sasl.jaas.config", "source.cluster.sasl.oauthbearer.assertion.private.key.passphrase", "target.cluster.sasl.oauthbearer.client.credentials.client.secret"} {
		if !strings.Contains(audit, `"`+key+`":"[redacted]"`) {
			t.Errorf("the audit's create record does not show %s redacted", key)
		}
	}
}

// checkDryRun checks the apply -dry-run step of sc: it showed the
// connector's configuration with its client settings, the JAAS line
// redacted, and the apply that followed still created the connector.
func checkDryRun(t *testing.T, sc *secureScenario) {
	t.Helper()
	for i, st := range sc.steps {
		if len(st.Args) < 2 || st.Args[0] != "apply" || st.Args[1] != "-dry-run" {
			continue
		}
		for _, want := range []string{"dry run: nothing is written", "(STOPPED) with:", "source.cluster.security.protocol", "would PATCH 9 partition offsets"} {
			if !strings.Contains(st.Stdout, want) {
				t.Errorf("apply -dry-run does not say %q:\n%s", want, st.Stdout)
			}
		}
		if sc.inline && !regexpJAASRedacted.MatchString(st.Stdout) {
			t.Errorf("apply -dry-run does not show the JAAS line redacted:\n%s", st.Stdout)
		}
		if i+1 >= len(sc.steps) || sc.steps[i+1].Args[0] != "apply" {
			t.Errorf("no apply after the dry run")
		} else if !regexpCreated.MatchString(sc.steps[i+1].Stdout) {
			t.Errorf("the apply after the dry run did not create the connector:\n%s", sc.steps[i+1].Stdout)
		}
		return
	}
	t.Error("no apply -dry-run step")
}

var (
	regexpCreated      = regexp.MustCompile(`created STOPPED\s+true`)
	regexpJAASRedacted = regexp.MustCompile(`source\.cluster\.sasl\.jaas\.config\s+\[redacted\]`)
)

// TestSecureCutoverListeners is the cutover through the command line on
// the secure sandbox's mTLS listener and on its OAUTHBEARER listener, with
// every setting as the client properties files users have: one per cluster
// for the tool (-source-client-config, -target-client-config: a PKCS12
// client certificate, or client credentials for the sandbox's token
// endpoint), one for the Connect REST client (the CA), and the connector's
// (-mm2-*-client: a PEM keystore, or Kafka's unsecured tokens). The
// principals are the certificates' common names and the tokens' subjects,
// not super users: the brokers' authorizer allows them only what ACLs on the
// scenario's prefix grant. Then every record is on the target once, the
// rollback commits C', and no secret — the keystore password, the client
// secret, the REST password, a private key — is in anything printed or
// written.
func TestSecureCutoverListeners(t *testing.T) {
	sb := sandboxtest.SharedSecure(t)
	for _, listener := range []string{"mtls", "oauth"} {
		t.Run(listener, func(t *testing.T) { listenerCutover(t, sb, listener) })
	}
}

// TestSecureCutoverKerberos is the cutover through the command line on the
// brokers' Kerberos listeners (SASL_SSL, GSSAPI) of the secure sandbox, as
// TestSecureCutoverListeners runs it on the others: the tool logs in from a
// keytab named in its client properties files (Kafka's Krb5LoginModule
// entry, sasl.kerberos.service.name; krb5.conf from KRB5_CONFIG), MM2's
// source and target clients each as their own principal from a keytab
// every worker holds (connect.GSSAPIClient), the workers' own clients as
// theirs; none is a super user but the workers'. Every record is on the
// target once, the rollback commits C', and neither a password nor a
// keytab's bytes or keys are in anything the steps printed or wrote, nor in
// the workers' logs.
func TestSecureCutoverKerberos(t *testing.T) {
	sb := sandboxtest.SharedKerberos(t)
	sc := listenerCutover(t, sb, "kerberos")
	if t.Failed() {
		return
	}
	if len(sc.keytabs) != 3 {
		t.Fatalf("%d keytabs, want the tool's and MM2's source and target clients'", len(sc.keytabs))
	}
	audit, err := os.ReadFile(filepath.Join(sc.dir, "plan.audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"source.cluster.sasl.mechanism":"GSSAPI"`, `"target.cluster.sasl.mechanism":"GSSAPI"`,
		`"source.cluster.sasl.jaas.config":"[redacted]"`, `"source.cluster.sasl.kerberos.service.name":"kafka"`} {
		if !strings.Contains(string(audit), want) {
			t.Errorf("the audit's create record does not hold %s", want)
		}
	}
	// The workers' logs: the MM2 clients logged in there, with the keytabs.
	secrets := secretForms(sc)
	scanned := 0
	for i, w := range sb.Workers() {
		b, err := os.ReadFile(w.Log())
		if err != nil {
			t.Fatal(err)
		}
		scanned += len(b)
		assertNoSecret(t, fmt.Sprintf("worker %d log", i), string(b), secrets)
		for _, kt := range sc.keytabs[1:] {
			if !strings.Contains(string(b), kt.Principal) {
				t.Logf("worker %d's log does not name %s (its tasks may run on the other worker)", i, kt.Principal)
			}
		}
	}
	t.Logf("scanned the workers' logs, %d bytes, for %d secret values: none found", scanned, len(secrets))
}

// listenerCutover runs the cutover through the command line on listener
// (newListenerScenario) of sb, checks every record on the target, the
// rollback and the dry run, and scans what the steps printed and wrote for
// the scenario's secrets.
func listenerCutover(t *testing.T, sb *sandbox.Sandbox, listener string) *secureScenario {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	prefix := listener + strconv.FormatInt(time.Now().UnixNano()%1e6, 36) + "-"
	var out, errb bytes.Buffer
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	sc, err := newListenerScenario(ctx, sb, prefix, listener, t.Setenv, &out, &errb, log)
	if sc != nil {
		t.Cleanup(func() { os.RemoveAll(sc.dir) })
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stdout of the steps:\n%s\nstderr of the steps:\n%s", out.String(), errb.String())
		}
	})
	start := time.Now()
	if err := sc.start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sc.cutover(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.deleteConnector(context.WithoutCancel(ctx), sc.connector) })
	res, err := sc.check(ctx)
	if err != nil {
		t.Fatalf("%v (%+v)", err, res)
	}
	if err := sc.rollback(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d source records, %d lost, %d duplicated; cutover and rollback through the command line in %v",
		listener, res.Records, res.Lost, res.Duplicated, time.Since(start).Round(time.Second))
	checkDryRun(t, sc)
	secrets := append(secretForms(sc), "PRIVATE KEY")
	scanned := 0
	for i, st := range sc.steps {
		scanned += len(st.Stdout) + len(st.Stderr)
		assertNoSecret(t, fmt.Sprintf("step %d (%s) stdout", i, st.Args[0]), st.Stdout, secrets)
		assertNoSecret(t, fmt.Sprintf("step %d (%s) stderr", i, st.Args[0]), st.Stderr, secrets)
	}
	for _, f := range []string{"plan.json", "plan.audit.jsonl", "plan.reverse.json"} {
		b, err := os.ReadFile(filepath.Join(sc.dir, f))
		if err != nil {
			t.Fatal(err)
		}
		scanned += len(b)
		assertNoSecret(t, f, string(b), secrets)
	}
	t.Logf("scanned %d steps and 3 files, %d bytes, for %d secret values and their encodings: none found", len(sc.steps), scanned, len(secrets))
	return sc
}

// secretForms returns the scenario's secret values and the forms they
// could leak in: the random part of each sandbox password, and the
// Authorization header's base64 of user:password.
func secretForms(sc *secureScenario) []string {
	var out []string
	for _, s := range sc.Secrets() {
		out = append(out, s)
		if i := strings.LastIndexByte(s, '-'); i >= 0 && len(s)-i > 8 {
			out = append(out, s[i+1:])
		}
	}
	u := sc.sb.ConnectUser()
	return append(out, base64.StdEncoding.EncodeToString([]byte(u.Name+":"+u.Password)))
}

// assertNoSecret fails the test when text holds one of secrets, naming
// where, without showing the secret.
func assertNoSecret(t *testing.T, what, text string, secrets []string) {
	t.Helper()
	for n, s := range secrets {
		if i := strings.Index(text, s); i >= 0 {
			around := text[max(0, i-60):min(len(text), i+len(s)+20)]
			t.Errorf("%s shows secret #%d: ...%s...", what, n, strings.ReplaceAll(around, s, "<SECRET>"))
		}
	}
}

// buildJob builds examples/job into a temporary directory.
func buildJob(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "job")
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", bin, "../job")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ../job: %v\n%s", err, out)
	}
	t.Logf("built the Job in %v", time.Since(start).Round(100*time.Millisecond))
	return bin
}

// TestSecureFaults: each setting a secure cluster or worker rejects fails
// the command line at once — no retry, exit 2 — with a message naming the
// cause, and shows no password, the wrong one included.
func TestSecureFaults(t *testing.T) {
	sb := sandboxtest.SharedSecure(t)
	sc, err := newSecureScenario(sb, "faults-", false, t.Setenv, &bytes.Buffer{}, &bytes.Buffer{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sc.dir) })
	other := sandboxtest.OtherCA(t)
	const wrong = "wrong-password-marker-5b1c"
	node := sb.Source().Nodes()[0]
	httpURL := "http://" + strings.TrimPrefix(sb.Workers()[0].URL(), "https://")
	for _, tc := range []struct {
		name string
		edit func(args []string) []string
		env  map[string]string
		want string
	}{
		{"source wrong password", nil, map[string]string{"MM2CUTOVER_SOURCE_SASL_PASSWORD": wrong},
			`rejected user "admin" with SCRAM-SHA-512 (wrong password, unknown user`},
		{"target unknown user", func(a []string) []string { return setFlag(a, "-target-sasl-username", "nobody") }, nil,
			`rejected user "nobody" with SCRAM-SHA-512`},
		{"source wrong CA", func(a []string) []string { return setFlag(a, "-source-tls-ca", other) }, nil,
			"the broker's certificate does not verify (check TLS.CAFile"},
		{"SSL against a PLAINTEXT port", func(a []string) []string { return setFlag(a, "-source-bootstrap", node.InternalAddr()) }, nil,
			"no TLS handshake: the listener is not an SSL or SASL_SSL listener"},
		{"PLAINTEXT against an SSL port", func(a []string) []string {
			a = setFlag(a, "-source-security-protocol", "PLAINTEXT")
			return dropFlags(a, "-source-sasl-mechanism", "-source-sasl-username", "-source-tls-ca")
		}, map[string]string{"MM2CUTOVER_SOURCE_SASL_PASSWORD": ""}, "the listener speaks TLS"},
		{"Connect wrong password", nil, map[string]string{"MM2CUTOVER_CONNECT_PASSWORD": wrong}, "401 Unauthorized"},
		{"Connect unknown user", func(a []string) []string { return setFlag(a, "-connect-user", "nobody") }, nil, "401 Unauthorized"},
		{"Connect wrong CA", func(a []string) []string { return setFlag(a, "-connect-ca", other) }, nil, "certificate signed by unknown authority"},
		{"Connect plain HTTP against HTTPS", func(a []string) []string {
			return dropFlags(setFlag(a, "-connect-url", httpURL), "-connect-ca")
		}, nil, "the endpoint speaks TLS: use https://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc.setenv = t.Setenv
			sc.setPasswords()
			for k, v := range tc.env {
				t.Setenv(k, v)
				if v == "" {
					os.Unsetenv(k)
				}
			}
			args := append([]string{"precheck"}, sc.flags()...)
			if tc.edit != nil {
				args = tc.edit(args)
			}
			var out, errb bytes.Buffer
			start := time.Now()
			code := run(args, &out, &errb)
			took := time.Since(start)
			t.Logf("exit %d after %v: %s", code, took.Round(time.Millisecond), strings.TrimSpace(errb.String()))
			if code != app.ExitUsage {
				t.Errorf("exit %d, want %d", code, app.ExitUsage)
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("stderr does not say %q", tc.want)
			}
			if strings.Contains(errb.String(), "retrying") || strings.Contains(errb.String(), "gave up after") {
				t.Errorf("the failure was retried")
			}
			assertNoSecret(t, "stdout", out.String(), append(secretForms(sc), wrong))
			assertNoSecret(t, "stderr", errb.String(), append(secretForms(sc), wrong))
		})
	}
}

// setFlag sets the value of flag in args.
func setFlag(args []string, flag, value string) []string {
	args = slices.Clone(args)
	i := slices.Index(args, flag)
	args[i+1] = value
	return args
}

// dropFlags removes flags and their values from args.
func dropFlags(args []string, flags ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if slices.Contains(flags, args[i]) {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// TestSecureKerberosRejected: the tool's Kerberos login that the KDC
// refuses — a principal deleted from the KDC, a keytab made stale by new
// keys — fails the command line at once, exit 2, saying the KDC rejected
// the principal, without a retry; a keytab that holds no key of the
// principal named is refused before any login, exit 2 too. Nothing printed
// shows a password or a keytab's bytes.
func TestSecureKerberosRejected(t *testing.T) {
	sb := sandboxtest.SharedKerberos(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	prefix := "krbrej" + strconv.FormatInt(time.Now().UnixNano()%1e6, 36) + "-"
	sc, err := newListenerScenario(ctx, sb, prefix, "kerberos", t.Setenv, &bytes.Buffer{}, &bytes.Buffer{}, slog.New(slog.DiscardHandler))
	if sc != nil {
		t.Cleanup(func() { os.RemoveAll(sc.dir) })
	}
	if err != nil {
		t.Fatal(err)
	}
	gone, err := sb.KerberosKeytab(ctx, prefix+"gone")
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.KerberosDelete(ctx, prefix+"gone"); err != nil {
		t.Fatal(err)
	}
	stale, err := sb.KerberosKeytab(ctx, prefix+"stale")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := sb.KerberosKeytab(ctx, prefix+"stale")
	if err != nil {
		t.Fatal(err)
	}
	sc.keytabs = append(sc.keytabs, gone, stale, fresh)
	original, err := os.ReadFile(filepath.Join(sc.dir, "source.properties"))
	if err != nil {
		t.Fatal(err)
	}
	tool := sc.keytabs[0]
	for _, tc := range []struct {
		name                  string
		principal, keytabFile string
		want                  string
	}{
		{"a principal deleted from the KDC", gone.Principal, gone.KeytabFile,
			`the KDC rejected the Kerberos login of principal "` + gone.Principal + `"`},
		{"a stale keytab", stale.Principal, stale.KeytabFile,
			`the KDC rejected the Kerberos login of principal "` + stale.Principal + `"`},
		{"another principal's keytab", sc.keytabs[1].Principal, tool.KeytabFile,
			"holds no key of " + sc.keytabs[1].Principal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc.setenv = t.Setenv
			sc.setPasswords()
			text := strings.NewReplacer(tool.Principal, tc.principal, tool.KeytabFile, tc.keytabFile).Replace(string(original))
			if err := os.WriteFile(filepath.Join(sc.dir, "source.properties"), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.WriteFile(filepath.Join(sc.dir, "source.properties"), original, 0o600) })
			var out, errb bytes.Buffer
			start := time.Now()
			code := run(append([]string{"precheck"}, sc.flags()...), &out, &errb)
			took := time.Since(start)
			t.Logf("exit %d after %v: %s", code, took.Round(time.Millisecond), strings.TrimSpace(errb.String()))
			if code != app.ExitUsage {
				t.Errorf("exit %d, want %d", code, app.ExitUsage)
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("stderr does not say %q", tc.want)
			}
			if strings.Contains(errb.String(), "retrying") || strings.Contains(errb.String(), "gave up after") {
				t.Errorf("the failure was retried")
			}
			assertNoSecret(t, "stdout", out.String(), secretForms(sc))
			assertNoSecret(t, "stderr", errb.String(), secretForms(sc))
		})
	}
}
