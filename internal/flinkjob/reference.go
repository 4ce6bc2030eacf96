package flinkjob

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ReferenceSplit is one KafkaPartitionSplit as Flink's own classes decode
// it from a savepoint.
type ReferenceSplit struct {
	Topic          string `json:"topic"`
	Partition      int32  `json:"partition"`
	StartingOffset int64  `json:"starting_offset"`
	StoppingOffset int64  `json:"stopping_offset"`
}

// ReferencePositions is what Flink's State Processor API reads from the
// SourceReaderState of one operator uid: the OperatorID Flink derives from
// the uid, and the splits, or the error Flink gave.
type ReferencePositions struct {
	UID        string           `json:"uid"`
	OperatorID string           `json:"operator_id"` // 32 hex digits
	Splits     []ReferenceSplit `json:"splits"`
	Error      string           `json:"error"`
}

// ReadPositions reads the KafkaSource splits of each operator uid from the
// savepoint at path (a directory or a file: URI) with Flink's State
// Processor API (SavepointReader.readListState of "SourceReaderState") and
// the connector's KafkaPartitionSplitSerializer, in a JVM of its own, for
// the Flink line version ("" as in Config.Version). It is the tests'
// reference for the Go reader of savepoints, never part of a cutover.
// Errors match ErrNoFlink when the job cannot be built; a uid Flink cannot
// read is reported in its ReferencePositions.Error.
func ReadPositions(ctx context.Context, version, cacheDir, path string, uids ...string) ([]ReferencePositions, error) {
	if version == "" {
		version = os.Getenv(VersionEnv)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("%w: java is not installed (Java 17 or newer is needed)", ErrNoFlink)
	}
	dist, err := Build(ctx, version, cacheDir, nil)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "flink-spa-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// The caller's context bounds the JVM: a fixed 3 minutes here killed it
	// in a loaded run (CPU burner beside the whole suite).
	argv := append([]string{"-Xms64m", "-Xmx256m", "-Djava.io.tmpdir=" + tmp}, jvmFlags...)
	argv = append(argv, "-cp", dist.classpath(), "io.github.mm2cutover.flinkjob.SavepointPositions", path)
	cmd := exec.CommandContext(ctx, java, append(argv, uids...)...)
	cmd.Env = baseEnv()
	cmd.Dir = tmp
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("state processor api on %s: %v\n%s", filepath.Base(path), err, lastLines(stderr.String(), 30))
	}
	var out []ReferencePositions
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r ReferencePositions
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("state processor api: bad output line %q: %v", line, err)
		}
		out = append(out, r)
	}
	if len(out) != len(uids) {
		return nil, fmt.Errorf("state processor api: %d answers for %d uids\n%s", len(out), len(uids), lastLines(stderr.String(), 30))
	}
	return out, nil
}
