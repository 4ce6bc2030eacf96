package errkind_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/clientconf"
	"github.com/mm2cutover/mm2cutover/connect"
	"github.com/mm2cutover/mm2cutover/cutover"
	"github.com/mm2cutover/mm2cutover/errkind"
	"github.com/mm2cutover/mm2cutover/flinkrest"
	"github.com/mm2cutover/mm2cutover/flinksavepoint"
	"github.com/mm2cutover/mm2cutover/kafkaadmin"
	"github.com/mm2cutover/mm2cutover/offsets"
	"github.com/mm2cutover/mm2cutover/plan"
	"github.com/mm2cutover/mm2cutover/verify"
)

// kindRow is one error of the library, by the name it is exported under
// (package.Name), with the kind errkind.Of gives it and the exit status a
// tool gives it. A typed error whose kind depends on its fields has a row
// per case, named "package.Type/case".
type kindRow struct {
	name string
	err  error
	kind errkind.Kind
}

// table lists every exported sentinel and typed error of the library's
// packages. TestTableIsComplete fails when a package exports one this
// table does not name.
func table() []kindRow {
	task := 0
	deadline := fmt.Errorf("wait: %w", context.DeadlineExceeded)
	return []kindRow{
		// offsets: a partition blocked for a reason is a check that failed;
		// an alias or action that is not one is a setting to fix.
		{"offsets.ErrInvalidPartition", offsets.ErrInvalidPartition, errkind.CheckFailed},
		{"offsets.ErrInvalidBounds", offsets.ErrInvalidBounds, errkind.CheckFailed},
		{"offsets.ErrMissing", offsets.ErrMissing, errkind.CheckFailed},
		{"offsets.ErrNegative", offsets.ErrNegative, errkind.CheckFailed},
		{"offsets.ErrBeyondEnd", offsets.ErrBeyondEnd, errkind.CheckFailed},
		{"offsets.ErrExpired", offsets.ErrExpired, errkind.CheckFailed},
		{"offsets.ErrOverflow", offsets.ErrOverflow, errkind.CheckFailed},
		{"offsets.ErrAliasMismatch", offsets.ErrAliasMismatch, errkind.Rejected},
		{"offsets.ErrDuplicate", offsets.ErrDuplicate, errkind.CheckFailed},
		{"offsets.ErrMalformed", offsets.ErrMalformed, errkind.CheckFailed},
		{"offsets.ErrUnknownAction", offsets.ErrUnknownAction, errkind.Rejected},
		{"offsets.ErrInvalidPolicy", offsets.ErrInvalidPolicy, errkind.Rejected},
		{"offsets.DecisionError", &offsets.DecisionError{Err: offsets.ErrExpired}, errkind.CheckFailed},
		{"offsets.OffsetError", &offsets.OffsetError{Err: offsets.ErrNegative}, errkind.CheckFailed},
		{"offsets.ConnectPartitionError", &offsets.ConnectPartitionError{Err: offsets.ErrAliasMismatch}, errkind.Rejected},

		// plan: an invalid plan is refused, whatever the detail; a blocked
		// one is a check that failed.
		{"plan.ErrInvalid", plan.ErrInvalid, errkind.Refused},
		{"plan.ErrMalformed", plan.ErrMalformed, errkind.Refused},
		{"plan.ErrUnknownField", plan.ErrUnknownField, errkind.Refused},
		{"plan.ErrTrailingData", plan.ErrTrailingData, errkind.Refused},
		{"plan.ErrSchemaVersion", plan.ErrSchemaVersion, errkind.Refused},
		{"plan.ErrMissingField", plan.ErrMissingField, errkind.Refused},
		{"plan.ErrInvalidField", plan.ErrInvalidField, errkind.Refused},
		{"plan.ErrNoPartitions", plan.ErrNoPartitions, errkind.Refused},
		{"plan.ErrDuplicatePartition", plan.ErrDuplicatePartition, errkind.Refused},
		{"plan.ErrUnsorted", plan.ErrUnsorted, errkind.Refused},
		{"plan.ErrUnknownPartition", plan.ErrUnknownPartition, errkind.Refused},
		{"plan.ErrMissingTargetEnd", plan.ErrMissingTargetEnd, errkind.Refused},
		{"plan.ErrInconsistent", plan.ErrInconsistent, errkind.Refused},
		{"plan.ErrFingerprint", plan.ErrFingerprint, errkind.Refused},
		{"plan.ErrConfigMismatch", plan.ErrConfigMismatch, errkind.Refused},
		{"plan.ErrConfigNotRecorded", plan.ErrConfigNotRecorded, errkind.Refused},
		{"plan.ErrBlocked", plan.ErrBlocked, errkind.CheckFailed},
		{"plan.ErrConfigChanged", plan.ErrConfigChanged, errkind.Refused},
		{"plan.ErrStaleOffsets", plan.ErrStaleOffsets, errkind.Refused},
		{"plan.FieldError", &plan.FieldError{Field: "group_id", Err: plan.ErrMissingField}, errkind.Refused},
		{"plan.PartitionError", &plan.PartitionError{Err: plan.ErrInconsistent}, errkind.Refused},
		{"plan.PartitionError/offsets", &plan.PartitionError{Err: offsets.ErrExpired}, errkind.CheckFailed},
		{"plan.SchemaVersionError", &plan.SchemaVersionError{Got: 99}, errkind.Refused},
		{"plan.FingerprintError", &plan.FingerprintError{}, errkind.Refused},
		{"plan.BlockedError", &plan.BlockedError{}, errkind.CheckFailed},
		{"plan.LineError", &plan.LineError{Line: 3, Err: plan.ErrMalformed}, errkind.Refused},
		{"plan.ConfigChangedError", &plan.ConfigChangedError{Field: "config_digest"}, errkind.Refused},
		{"plan.StaleOffsetsError", &plan.StaleOffsetsError{}, errkind.Refused},

		// connect
		{"connect.ErrNotFound", connect.ErrNotFound, errkind.Refused},
		{"connect.ErrAlreadyExists", connect.ErrAlreadyExists, errkind.Refused},
		{"connect.ErrNotStopped", connect.ErrNotStopped, errkind.Refused},
		{"connect.ErrRebalance", connect.ErrRebalance, errkind.Retry},
		{"connect.ErrUnauthorized", connect.ErrUnauthorized, errkind.Rejected},
		{"connect.ErrForbidden", connect.ErrForbidden, errkind.Rejected},
		{"connect.ErrForwarding", connect.ErrForwarding, errkind.Retry},
		{"connect.ErrUnsupportedVersion", connect.ErrUnsupportedVersion, errkind.Rejected},
		{"connect.ErrFailed", connect.ErrFailed, errkind.CheckFailed},
		{"connect.ErrOffsetsUnavailable", connect.ErrOffsetsUnavailable, errkind.Retry},
		{"connect.ErrOutcomeUnknown", connect.ErrOutcomeUnknown, errkind.OutcomeUnknown},
		{"connect.ErrNotMirrorOffset", connect.ErrNotMirrorOffset, errkind.CheckFailed},
		{"connect.ErrReadBack", connect.ErrReadBack, errkind.CheckFailed},
		{"connect.ErrOffsetsUnread", connect.ErrOffsetsUnread, errkind.Retry},
		{"connect.ErrOffsetsUnsettled", connect.ErrOffsetsUnsettled, errkind.Retry},
		{"connect.ErrTLS", connect.ErrTLS, errkind.Rejected},
		{"connect.ErrClientBootstrap", connect.ErrClientBootstrap, errkind.Rejected},
		{"connect.ErrExtraClash", connect.ErrExtraClash, errkind.Rejected},
		{"connect.ErrKeyMaterialKey", connect.ErrKeyMaterialKey, errkind.Rejected},
		{"connect.ErrRedirect", connect.ErrRedirect, errkind.Rejected},
		{"connect.RedirectError", &connect.RedirectError{Method: "PATCH", Path: "/connectors/c/offsets", StatusCode: 301, Location: "https://lb/connectors/c/offsets", BaseURL: "https://lb"}, errkind.Rejected},
		{"connect.APIError/401", &connect.APIError{Method: "GET", Path: "/", StatusCode: http.StatusUnauthorized}, errkind.Rejected},
		{"connect.APIError/403", &connect.APIError{Method: "GET", Path: "/", StatusCode: http.StatusForbidden}, errkind.Rejected},
		{"connect.APIError/400 bad config", &connect.APIError{Method: "POST", Path: "/connectors", StatusCode: 400, Message: "Connector configuration is invalid"}, errkind.Rejected},
		{"connect.APIError/404", &connect.APIError{Method: "GET", Path: "/connectors/c", StatusCode: 404}, errkind.Refused},
		{"connect.APIError/409 exists", &connect.APIError{Method: "POST", Path: "/connectors", StatusCode: 409, Message: "Connector c already exists"}, errkind.Refused},
		{"connect.APIError/409 rebalance", &connect.APIError{Method: "POST", Path: "/connectors", StatusCode: 409, Message: "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"}, errkind.Retry},
		{"connect.APIError/400 not stopped", &connect.APIError{Method: "PATCH", Path: "/connectors/c/offsets", StatusCode: 400, Message: "Connectors must be in the STOPPED state before their offsets can be modified"}, errkind.Refused},
		{"connect.APIError/500", &connect.APIError{Method: "GET", Path: "/", StatusCode: 500, Message: "boom"}, errkind.Retry},
		{"connect.APIError/500 forwarding", &connect.APIError{Method: "PUT", Path: "/connectors/c/stop", StatusCode: 500, Message: "IO Error trying to forward REST request: Connection refused"}, errkind.Retry},
		{"connect.APIError/500 write timed out", &connect.APIError{Method: "PATCH", Path: "/connectors/c/offsets", StatusCode: 500, Message: "Request timed out"}, errkind.OutcomeUnknown},
		{"connect.APIError/500 read timed out", &connect.APIError{Method: "GET", Path: "/connectors/c/offsets", StatusCode: 500, Message: "Request timed out"}, errkind.Retry},
		{"connect.APIError/503", &connect.APIError{Method: "GET", Path: "/", StatusCode: 503}, errkind.Retry},
		{"connect.NotStoppedError/running", &connect.NotStoppedError{Connector: "c", State: "RUNNING", Tasks: 1}, errkind.Refused},
		{"connect.NotStoppedError/settling", &connect.NotStoppedError{Connector: "c", State: "UNASSIGNED", Settling: true}, errkind.Retry},
		{"connect.VersionError", &connect.VersionError{Feature: "alter offsets", Need: "3.6", Have: "3.5.1"}, errkind.Rejected},
		{"connect.FailedError", &connect.FailedError{Connector: "c", Task: &task}, errkind.CheckFailed},
		{"connect.ConfigConflictError", &connect.ConfigConflictError{Connector: "c"}, errkind.Refused},
		{"connect.ReadBackError/read", &connect.ReadBackError{Reads: 3, Attempts: 5, Err: deadline}, errkind.CheckFailed},
		{"connect.ReadBackError/unread", &connect.ReadBackError{Attempts: 14, Err: deadline}, errkind.Retry},
		{"connect.SecurityError", &connect.SecurityError{Method: "GET", Path: "/", Reason: "r"}, errkind.Rejected},
		{"connect.UnreachableError", &connect.UnreachableError{URL: "http://c", Method: "GET", Path: "/", Attempts: 9, Err: fmt.Errorf("dial: %w", syscall.ECONNREFUSED)}, errkind.Retry},

		// kafkaadmin
		{"kafkaadmin.ErrInvalidConfig", kafkaadmin.ErrInvalidConfig, errkind.Rejected},
		{"kafkaadmin.ErrInvalidArgument", kafkaadmin.ErrInvalidArgument, errkind.Rejected},
		{"kafkaadmin.ErrUnknownTopic", kafkaadmin.ErrUnknownTopic, errkind.CheckFailed},
		{"kafkaadmin.ErrGroupActive", kafkaadmin.ErrGroupActive, errkind.Refused},
		{"kafkaadmin.ErrTopicsChanged", kafkaadmin.ErrTopicsChanged, errkind.Retry},
		{"kafkaadmin.ErrPartial", kafkaadmin.ErrPartial, errkind.Retry},
		{"kafkaadmin.ErrAuthentication", kafkaadmin.ErrAuthentication, errkind.Rejected},
		{"kafkaadmin.ErrTLS", kafkaadmin.ErrTLS, errkind.Rejected},
		{"kafkaadmin.ErrSecurityProtocol", kafkaadmin.ErrSecurityProtocol, errkind.Rejected},
		{"kafkaadmin.ErrMalformedOffsetRecord", kafkaadmin.ErrMalformedOffsetRecord, errkind.CheckFailed},
		{"kafkaadmin.ErrNoRecord", kafkaadmin.ErrNoRecord, errkind.CheckFailed},
		{"kafkaadmin.ErrACLsUnreadable", kafkaadmin.ErrACLsUnreadable, errkind.Rejected},
		{"kafkaadmin.ErrNoAuthorizer", kafkaadmin.ErrNoAuthorizer, errkind.CheckFailed},
		{"kafkaadmin.SecurityError", &kafkaadmin.SecurityError{Addr: "b:9093", Kind: kafkaadmin.ErrAuthentication, Reason: "rejected"}, errkind.Rejected},
		{"kafkaadmin.TokenEndpointError", &kafkaadmin.TokenEndpointError{URL: "https://idp", StatusCode: 401}, errkind.Rejected},
		{"kafkaadmin.ConfigError", &kafkaadmin.ConfigError{}, errkind.Rejected},
		{"kafkaadmin.ArgumentError", &kafkaadmin.ArgumentError{}, errkind.Rejected},
		{"kafkaadmin.UnknownTopicsError", &kafkaadmin.UnknownTopicsError{Topics: []string{"t"}}, errkind.CheckFailed},
		{"kafkaadmin.GroupActiveError", &kafkaadmin.GroupActiveError{Group: "g"}, errkind.Refused},
		{"kafkaadmin.TopicsChangedError", &kafkaadmin.TopicsChangedError{}, errkind.Retry},
		{"kafkaadmin.UnreachableError", &kafkaadmin.UnreachableError{Brokers: []string{"b:9092"}, Op: "metadata", Err: sarama.ErrOutOfBrokers}, errkind.Retry},
		{"kafkaadmin.PartitionErrors/retriable", &kafkaadmin.PartitionErrors{Op: "list offsets", Total: 2, Errs: map[kafkaadmin.TopicPartition]error{{Topic: "t"}: sarama.ErrNotLeaderForPartition}}, errkind.Retry},
		{"kafkaadmin.PartitionErrors/authorization", &kafkaadmin.PartitionErrors{Op: "list offsets", Total: 2, Errs: map[kafkaadmin.TopicPartition]error{{Topic: "t"}: sarama.ErrNotLeaderForPartition, {Topic: "u"}: sarama.ErrTopicAuthorizationFailed}}, errkind.Rejected},

		// verify
		{"verify.ErrForeignConnector", verify.ErrForeignConnector, errkind.Refused},
		{"verify.ErrCheckFailed", verify.ErrCheckFailed, errkind.CheckFailed},
		{"verify.ErrPrecheck", verify.ErrPrecheck, errkind.CheckFailed},
		{"verify.ErrStalePlan", verify.ErrStalePlan, errkind.Refused},
		{"verify.ErrGroupOffsets", verify.ErrGroupOffsets, errkind.Refused},
		{"verify.ErrNotApplied", verify.ErrNotApplied, errkind.Refused},
		{"verify.ErrHasRun", verify.ErrHasRun, errkind.Refused},
		{"verify.GroupOffsetsError", &verify.GroupOffsetsError{}, errkind.Refused},
		{"verify.PrecheckError", &verify.PrecheckError{}, errkind.CheckFailed},
		{"verify.StalePlanError", &verify.StalePlanError{}, errkind.Refused},
		{"verify.LintError", &verify.LintError{}, errkind.CheckFailed},
		{"verify.ForeignConnectorError", &verify.ForeignConnectorError{Connector: "c", Check: "topics"}, errkind.Refused},

		{"verify.ErrNoProof", verify.ErrNoProof, errkind.Refused},

		// cutover
		{"cutover.ErrInvalidUse", cutover.ErrInvalidUse, errkind.Rejected},
		{"cutover.ErrNeedsGroup", cutover.ErrNeedsGroup, errkind.Refused},
		{"cutover.ErrNotApproved", cutover.ErrNotApproved, errkind.NotApproved},
		{"cutover.ErrWorkerLags", cutover.ErrWorkerLags, errkind.Retry},

		// clientconf, flinkrest, flinksavepoint: inputs to fix.
		{"clientconf.ErrTooLarge", clientconf.ErrTooLarge, errkind.Rejected},
		{"clientconf.SyntaxError", &clientconf.SyntaxError{Line: 2, Reason: "bad escape"}, errkind.Rejected},
		{"clientconf.StoreError", &clientconf.StoreError{Setting: "ssl.truststore.location", Reason: "r"}, errkind.Rejected},
		{"flinkrest.ErrNotFound", flinkrest.ErrNotFound, errkind.Rejected},
		{"flinkrest.ResponseError/404", &flinkrest.ResponseError{StatusCode: 404}, errkind.Rejected},
		{"flinkrest.ResponseError/503", &flinkrest.ResponseError{StatusCode: 503}, errkind.Retry},
		{"flinkrest.ErrRedirect", flinkrest.ErrRedirect, errkind.Rejected},
		{"flinkrest.RedirectError", &flinkrest.RedirectError{Method: "GET", URL: "http://jm/jobs/j", StatusCode: 302}, errkind.Rejected},
		{"flinksavepoint.ErrInvalid", flinksavepoint.ErrInvalid, errkind.Rejected},
		{"flinksavepoint.ErrNotSavepoint", flinksavepoint.ErrNotSavepoint, errkind.Rejected},
		{"flinksavepoint.ErrVersion", flinksavepoint.ErrVersion, errkind.Rejected},
		{"flinksavepoint.ErrTruncated", flinksavepoint.ErrTruncated, errkind.Rejected},
		{"flinksavepoint.ErrMalformed", flinksavepoint.ErrMalformed, errkind.Rejected},
		{"flinksavepoint.ErrMissingFile", flinksavepoint.ErrMissingFile, errkind.Rejected},
		{"flinksavepoint.ErrUnsupported", flinksavepoint.ErrUnsupported, errkind.Rejected},
		{"flinksavepoint.ErrUnplaceable", flinksavepoint.ErrUnplaceable, errkind.Rejected},
		{"flinksavepoint.ErrNoSource", flinksavepoint.ErrNoSource, errkind.Rejected},
		{"flinksavepoint.ErrAmbiguous", flinksavepoint.ErrAmbiguous, errkind.Rejected},
		{"flinksavepoint.FormatError", &flinksavepoint.FormatError{File: "_metadata", Err: flinksavepoint.ErrTruncated}, errkind.Rejected},
		{"flinksavepoint.VersionError", &flinksavepoint.VersionError{}, errkind.Rejected},
		{"flinksavepoint.SourceError", &flinksavepoint.SourceError{Err: flinksavepoint.ErrAmbiguous}, errkind.Rejected},

		// Beside them, as a step returns them: the strongest kind wins,
		// and an error nobody marked is not worth a retry.
		// A redirect is a setting to fix: the client sent nothing where the
		// answer pointed. An https:// URL at a plain HTTP port likewise.
		{"wrapped/redirect", fmt.Errorf("apply: %w", &connect.RedirectError{Method: "GET", Path: "/", StatusCode: 307}), errkind.Rejected},
		{"wrapped/https at a plain port", fmt.Errorf("flinkrest: %w", &url.Error{Op: "Get", URL: "https://jm:8081/jobs/j", Err: http.ErrSchemeMismatch}), errkind.Rejected},
		{"wrapped/connection refused", fmt.Errorf("connect: GET /: %w", syscall.ECONNREFUSED), errkind.Retry},
		{"wrapped/unmarked", fmt.Errorf("write the audit record: %w", errors.New("no space left")), errkind.Unclassified},
		{"wrapped/joined", errors.Join(fmt.Errorf("x: %w", connect.ErrRebalance), &plan.StaleOffsetsError{}), errkind.Refused},
	}
}

func TestTable(t *testing.T) {
	for _, row := range table() {
		t.Run(row.name, func(t *testing.T) {
			k := errkind.Of(row.err)
			if k != row.kind {
				t.Errorf("Of(%v) = %v, want %v", row.err, k, row.kind)
			}
			// The exit status is the kind's: the CLI's and the Job's.
			if got, want := k.ExitCode(), row.kind.ExitCode(); got != want {
				t.Errorf("exit status %d, want %d", got, want)
			}
		})
	}
}

// TestTableIsComplete reads the source of every library package (those
// `go list` finds outside internal/ and examples/) and fails for an
// exported sentinel (a var Err...) or typed error (an exported type with an
// Error method) that the table does not name: a new error must say its
// kind here.
func TestTableIsComplete(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	named := map[string]bool{}
	for _, row := range table() {
		named[strings.SplitN(row.name, "/", 2)[0]] = true
	}
	var missing []string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath, Dir string
			GoFiles         []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(p.ImportPath, "/internal") || strings.Contains(p.ImportPath, "/examples") || strings.HasSuffix(p.ImportPath, "fake") || p.ImportPath == "github.com/mm2cutover/mm2cutover" || strings.HasPrefix(p.ImportPath, "github.com/mm2cutover/mm2cutover/docker") || strings.HasSuffix(p.ImportPath, "/errkind") {
			continue
		}
		pkg := filepath.Base(p.ImportPath)
		for _, name := range exportedErrors(t, p.Dir, p.GoFiles) {
			if !named[pkg+"."+name] {
				missing = append(missing, pkg+"."+name)
			}
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("errors without a row in the table (add each with its kind): %s", strings.Join(missing, ", "))
	}
}

// exportedErrors returns the exported sentinels (vars named Err...) and
// the exported types with an Error method of the files given.
func exportedErrors(t *testing.T, dir string, files []string) []string {
	fset := token.NewFileSet()
	var names []string
	for _, f := range files {
		af, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, s := range d.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if n.IsExported() && strings.HasPrefix(n.Name, "Err") {
							names = append(names, n.Name)
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil || d.Name.Name != "Error" || len(d.Recv.List) != 1 {
					continue
				}
				typ := d.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
					names = append(names, id.Name)
				}
			}
		}
	}
	return names
}
