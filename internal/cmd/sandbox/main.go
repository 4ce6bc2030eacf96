// Command sandbox starts the local Kafka + Kafka Connect sandbox.
//
// By default it runs the smoke demo: two KRaft clusters and two Connect
// workers start, records go through each cluster, a MirrorSourceConnector
// copies a topic from source to target, and every record is compared byte
// for byte; then everything stops. With -hold it keeps the sandbox running
// and writes its state file, so that test binaries can share it:
//
//	go run ./internal/cmd/sandbox -hold -state /tmp/mm2sandbox.json &
//	MM2CUTOVER_SANDBOX=/tmp/mm2sandbox.json go test ./...
//
// Progress goes to stderr, the result to stdout (-json for machines).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mm2cutover/mm2cutover/internal/sandbox"
)

func main() {
	cfg := sandbox.ConfigFromEnv()
	flag.StringVar(&cfg.KafkaVersion, "kafka-version", cfg.KafkaVersion, "Apache Kafka version (default "+sandbox.DefaultKafkaVersion+"; env MM2CUTOVER_KAFKA_VERSION)")
	flag.IntVar(&cfg.Workers, "workers", 2, "number of Kafka Connect workers")
	flag.IntVar(&cfg.SourceBrokers, "source-brokers", 1, "number of brokers of the source cluster")
	flag.IntVar(&cfg.TargetBrokers, "target-brokers", 1, "number of brokers of the target cluster")
	flag.IntVar(&cfg.ReplicationFactor, "replication-factor", 0, "default replication factor of a cluster of several brokers (0: every broker; 1 spreads partitions for scale)")
	flag.StringVar(&cfg.WorkerHeap, "worker-heap", "", "maximum heap of each worker, as 2g or 1536m (default 768m, the brokers')")
	flag.BoolVar(&cfg.Secure, "secure", false, "SASL_SSL brokers (SCRAM, PLAIN) and HTTPS + basic-auth workers, credentials generated at start")
	flag.BoolVar(&cfg.Kerberos, "kerberos", false, "with -secure: an MIT Kerberos KDC and a GSSAPI listener per broker; the workers log in from a keytab")
	flag.DurationVar(&cfg.Latency, "latency", 0, "round trip added to every client connection to a broker or worker, by a proxy in front of each (no state file then)")
	hold := flag.Bool("hold", false, "keep the sandbox running until interrupted instead of running the smoke demo")
	statePath := flag.String("state", "", "with -hold: write the sandbox state file here (for "+sandbox.StateEnv+")")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Parse()
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, *hold, *statePath, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg sandbox.Config, hold bool, statePath string, asJSON bool) error {
	start := time.Now()
	sb, err := sandbox.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer sb.Close()
	ready := time.Since(start)
	cfg.Logger.Info("sandbox ready", "kafka", sb.KafkaVersion(), "took", ready.Round(time.Millisecond))

	if hold {
		if statePath != "" {
			if err := sb.WriteState(statePath); err != nil {
				return err
			}
			defer os.Remove(statePath)
			fmt.Printf("export %s=%s\n", sandbox.StateEnv, statePath)
		}
		fmt.Printf("source %s  target %s  connect %s  (interrupt to stop)\n",
			sb.Source().Bootstrap(), sb.Target().Bootstrap(), sb.ConnectURL())
		if sb.Kerberos() {
			fmt.Printf("kerberos: KDC %s, realm %s, krb5.conf %s; source %v, target %v\n",
				sb.KDCAddr(), sandbox.KerberosRealm, sb.Krb5Conf(), sb.Source().KerberosAddrs(), sb.Target().KerberosAddrs())
		}
		<-ctx.Done()
		return nil
	}

	if cfg.Workers == 0 {
		return fmt.Errorf("the smoke demo needs a Connect worker: -workers 1 or more")
	}
	rep, err := sandbox.Smoke(ctx, sb, 100)
	if err != nil {
		fmt.Fprintln(os.Stderr, sb.LogTails(30))
		return err
	}
	result := struct {
		KafkaVersion    string  `json:"kafka_version"`
		Source          string  `json:"source"`
		Target          string  `json:"target"`
		Workers         int     `json:"workers"`
		StartSeconds    float64 `json:"start_seconds"`
		Topic           string  `json:"topic"`
		Records         int     `json:"records"`
		ReplicatedIn    float64 `json:"replicated_seconds"`
		ByteForByteSame bool    `json:"byte_for_byte_same"`
	}{sb.KafkaVersion(), sb.Source().Bootstrap(), sb.Target().Bootstrap(), len(sb.Workers()),
		ready.Seconds(), rep.Topic, rep.Records, rep.Replicated.Seconds(), true}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(result)
	}
	fmt.Printf("kafka %s: source %s, target %s, %d connect workers, ready in %.1fs\n",
		result.KafkaVersion, result.Source, result.Target, result.Workers, result.StartSeconds)
	fmt.Printf("MirrorSourceConnector copied %d records of %s byte for byte (key, value, headers) in %.1fs\n",
		result.Records, result.Topic, result.ReplicatedIn)
	return nil
}
