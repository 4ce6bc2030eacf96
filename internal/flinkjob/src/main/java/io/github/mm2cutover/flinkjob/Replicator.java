package io.github.mm2cutover.flinkjob;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.minicluster.MiniClusterJobClient;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The job being replaced: a Flink KafkaSource -> KafkaSink replicator, byte
 * for byte (key, value, headers, timestamp, partition), run in Flink's local
 * (MiniCluster) mode and controlled through its standard streams.
 *
 * <p>The source reads the topics with a group id, commit.offsets.on.checkpoint
 * and, when it starts without state, the group's committed offsets (EARLIEST
 * where the group has none). The sink writes at least once: it flushes on
 * every checkpoint.
 *
 * <p>The job runs on a MiniCluster of its own (one task manager with a slot per
 * subtask) whose REST API listens on a free port of 127.0.0.1, as a session
 * cluster's JobManager does: {@code --keep-cluster true} keeps it, and with it
 * the finished job's status and checkpoint history, after the job ended,
 * until {@code exit} or the end of input.
 *
 * <p>{@code --state-files file:///DIR} keeps checkpoints in DIR and every state
 * of a savepoint in files beside its _metadata (none inline).
 *
 * <p>{@code --extra-source UID=TOPIC,TOPIC} adds a second KafkaSource with that
 * uid (same group, its own topics), unioned into the same sink: a job with two
 * sources whose savepoint holds two SourceReaderStates.
 *
 * <p>Commands, one per line on stdin: {@code savepoint} (stop with a
 * savepoint, the graceful stop), {@code cancel} (cancel without one, the
 * crash case) and {@code exit} (end the process after the job ended). End of
 * input cancels too. Events, one JSON object per line on stdout (logs go to
 * stderr):
 *
 * <pre>
 * {"event":"running","job":"...","flink":"1.20.3","parallelism":2,"restored":"...","rest":"http://127.0.0.1:PORT"}
 * {"event":"checkpoint","checkpoint":7,"subtask":0,"offsets":[{"topic":"t","partition":0,"next":42}]}
 * {"event":"savepoint","path":"file:/.../savepoint-..."}
 * {"event":"cancelled"}
 * {"event":"finished"}
 * {"event":"failed","error":"..."}
 * </pre>
 *
 * A checkpoint line is printed by each subtask when Flink notifies it that a
 * checkpoint (or savepoint) completed; its offsets are, per partition the
 * subtask read, the next offset after the last record that went into that
 * checkpoint: what the source commits to the group for it.
 */
public final class Replicator {
    private static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);

    private Replicator() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = parseArgs(args);
        String source = required(a, "source");
        String target = required(a, "target");
        String group = required(a, "group");
        List<String> topics = Arrays.asList(required(a, "topics").split(","));
        String prefix = a.getOrDefault("target-prefix", "");
        int parallelism = Integer.parseInt(a.getOrDefault("parallelism", "2"));
        long interval = Long.parseLong(a.getOrDefault("checkpoint-interval-ms", "2000"));
        String savepointDir = required(a, "savepoint-dir");
        String restore = a.getOrDefault("from-savepoint", "");

        String extra = a.getOrDefault("extra-source", "");
        String stateFiles = a.getOrDefault("state-files", "");
        boolean keepCluster = Boolean.parseBoolean(a.getOrDefault("keep-cluster", "false"));
        boolean exactlyOnce = Boolean.parseBoolean(a.getOrDefault("exactly-once", "false"));

        Configuration conf = new Configuration();
        // Small and quiet: the sandbox shares two cores with Kafka and Connect.
        conf.setString("taskmanager.memory.network.min", "16m");
        conf.setString("taskmanager.memory.network.max", "16m");
        conf.setString("taskmanager.memory.managed.size", "16m");
        // The REST API on loopback only, on a free port (reported in the running event).
        conf.setString("rest.bind-address", "127.0.0.1");
        conf.setString("rest.address", "127.0.0.1");
        conf.setString("rest.bind-port", "0");
        // A failure ends the job (and the process) instead of a silent restart.
        conf.setString("restart-strategy.type", "none");
        if (!stateFiles.isEmpty()) {
            // Checkpoints on the file system, with no state inline in the
            // metadata: savepoints then keep every state in files beside
            // their _metadata, as with checkpoints on S3 or HDFS.
            conf.setString("execution.checkpointing.storage", "filesystem");
            conf.setString("execution.checkpointing.dir", stateFiles);
            conf.setString("execution.checkpointing.data-inline-threshold", "0b");
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
        env.enableCheckpointing(interval);

        Properties sourceProps = load(a.get("source-properties"));
        DataStream<Rec> records = env.fromSource(source(source, topics, group, sourceProps, group + "-source"),
                WatermarkStrategy.noWatermarks(), "kafka-source").uid("kafka-source");
        if (!extra.isEmpty()) {
            int eq = extra.indexOf('=');
            if (eq <= 0 || eq == extra.length() - 1) {
                throw new IllegalArgumentException("--extra-source wants UID=TOPIC,TOPIC, got " + extra);
            }
            String uid = extra.substring(0, eq);
            List<String> extraTopics = Arrays.asList(extra.substring(eq + 1).split(","));
            records = records.union(env.fromSource(source(source, extraTopics, group, sourceProps, group + "-" + uid),
                    WatermarkStrategy.noWatermarks(), uid).uid(uid));
        }
        Properties producer = load(a.get("target-properties"));
        producer.setProperty("acks", "all");
        if (exactlyOnce) {
            // The sink's default (one hour) is above the brokers' default
            // transaction.max.timeout.ms (15 minutes): InitProducerId would fail.
            producer.setProperty("transaction.timeout.ms", "600000");
        }
        KafkaSink<Rec> sink = KafkaSink.<Rec>builder()
                .setBootstrapServers(target)
                .setKafkaProducerConfig(producer)
                .setDeliveryGuarantee(exactlyOnce ? DeliveryGuarantee.EXACTLY_ONCE : DeliveryGuarantee.AT_LEAST_ONCE)
                .setTransactionalIdPrefix(group + "-sink")
                .setRecordSerializer(new RecSerializer(prefix))
                .build();
        records.map(new Positions()).uid("positions").name("positions")
                .sinkTo(sink).uid("kafka-sink").name("kafka-sink");

        StreamGraph streamGraph = env.getStreamGraph();
        streamGraph.setJobName("mm2cutover-flink-replicator");
        JobGraph graph = streamGraph.getJobGraph();
        if (!restore.isEmpty()) {
            graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(restore, false));
        }
        MiniCluster cluster = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(parallelism)
                .build());
        cluster.start();
        String rest = cluster.getRestAddress().get(1, TimeUnit.MINUTES).toString();
        cluster.submitJob(graph).get(1, TimeUnit.MINUTES);
        JobClient client = new MiniClusterJobClient(graph.getJobID(), cluster,
                Replicator.class.getClassLoader(), MiniClusterJobClient.JobFinalizationBehavior.NOTHING);
        // The job ends by our command or by failure; either way this thread reports it.
        Thread watcher = new Thread(() -> {
            try {
                client.getJobExecutionResult().get();
                emit("{\"event\":\"finished\"}");
            } catch (Exception e) {
                if (!stopping) {
                    emit("{\"event\":\"failed\",\"error\":" + quote(rootMessage(e)) + "}");
                    System.exit(1);
                }
            }
        }, "job-watcher");
        watcher.setDaemon(true);
        watcher.start();
        emit("{\"event\":\"running\",\"job\":" + quote(client.getJobID().toString())
                + ",\"flink\":" + quote(org.apache.flink.runtime.util.EnvironmentInformation.getVersion())
                + ",\"parallelism\":" + parallelism + ",\"restored\":" + quote(restore)
                + ",\"rest\":" + quote(rest) + "}");

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        boolean ended = false;
        while ((line = in.readLine()) != null) {
            String cmd = line.trim();
            if (cmd.equals("savepoint") && !ended) {
                stopping = true;
                String path = client.stopWithSavepoint(false, savepointDir, SavepointFormatType.CANONICAL).get(5, TimeUnit.MINUTES);
                emit("{\"event\":\"savepoint\",\"path\":" + quote(path) + "}");
                waitEnd(client);
                if (!keepCluster) {
                    System.exit(0);
                }
                ended = true;
            } else if (cmd.equals("cancel") && !ended) {
                break;
            } else if (cmd.equals("exit") && ended) {
                System.exit(0);
            } else if (!cmd.isEmpty()) {
                System.err.println("replicator: unknown command " + cmd + (ended ? " (the job ended)" : ""));
            }
        }
        if (ended) {
            System.exit(0);
        }
        stopping = true;
        client.cancel().get(5, TimeUnit.MINUTES);
        waitEnd(client);
        emit("{\"event\":\"cancelled\"}");
        if (keepCluster && line != null) {
            while ((line = in.readLine()) != null && !line.trim().equals("exit")) {
                System.err.println("replicator: unknown command " + line.trim() + " (the job ended)");
            }
        }
        System.exit(0);
    }

    /** A KafkaSource of the topics: the group's commits as its start, committing on checkpoints. */
    private static KafkaSource<Rec> source(String bootstrap, List<String> topics, String group, Properties props, String clientIdPrefix) {
        return KafkaSource.<Rec>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(topics)
                .setGroupId(group)
                .setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
                .setDeserializer(new RecDeserializer())
                .setProperties(props)
                .setProperty("commit.offsets.on.checkpoint", "true")
                .setProperty("client.id.prefix", clientIdPrefix)
                .build();
    }

    private static volatile boolean stopping;

    private static void waitEnd(JobClient client) {
        try {
            client.getJobExecutionResult().get(5, TimeUnit.MINUTES);
        } catch (Exception e) {
            // A cancelled job's result is an exception; it ended all the same.
        }
    }

    static synchronized void emit(String json) {
        OUT.println(json);
    }

    /** One Kafka record, byte for byte. */
    public static final class Rec {
        public String topic;
        public int partition;
        public long offset;
        public long timestamp;
        public byte[] key;
        public byte[] value;
        public String[] headerKeys;
        public byte[][] headerValues;

        public Rec() {}
    }

    static final class RecDeserializer implements KafkaRecordDeserializationSchema<Rec> {
        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<Rec> out) {
            Rec x = new Rec();
            x.topic = r.topic();
            x.partition = r.partition();
            x.offset = r.offset();
            x.timestamp = r.timestamp();
            x.key = r.key();
            x.value = r.value();
            List<String> ks = new ArrayList<>();
            List<byte[]> vs = new ArrayList<>();
            for (Header h : r.headers()) {
                ks.add(h.key());
                vs.add(h.value());
            }
            x.headerKeys = ks.toArray(new String[0]);
            x.headerValues = vs.toArray(new byte[0][]);
            out.collect(x);
        }

        @Override
        public TypeInformation<Rec> getProducedType() {
            return TypeInformation.of(Rec.class);
        }
    }

    static final class RecSerializer implements KafkaRecordSerializationSchema<Rec> {
        private final String prefix;

        RecSerializer(String prefix) {
            this.prefix = prefix;
        }

        @Override
        public ProducerRecord<byte[], byte[]> serialize(Rec r, KafkaRecordSerializationSchema.KafkaSinkContext ctx, Long ts) {
            RecordHeaders headers = new RecordHeaders();
            for (int i = 0; i < r.headerKeys.length; i++) {
                headers.add(r.headerKeys[i], r.headerValues[i]);
            }
            Long timestamp = r.timestamp >= 0 ? r.timestamp : null;
            return new ProducerRecord<>(prefix + r.topic, r.partition, timestamp, r.key, r.value, headers);
        }
    }

    /**
     * Passes records on unchanged and reports, per completed checkpoint, the
     * next offset of every partition this subtask read: chained right after
     * the source, it sees exactly the records the source emitted before each
     * checkpoint barrier, so these are the offsets the source commits.
     */
    static final class Positions extends RichMapFunction<Rec, Rec> implements CheckpointedFunction, CheckpointListener {
        private final Map<String, Long> next = new TreeMap<>();
        private final Map<Long, String> pending = new HashMap<>();

        @Override
        public Rec map(Rec r) {
            next.put(r.topic + "\u0000" + r.partition, r.offset + 1);
            return r;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) {
            StringBuilder b = new StringBuilder("[");
            for (Map.Entry<String, Long> e : next.entrySet()) {
                String[] tp = e.getKey().split("\u0000");
                if (b.length() > 1) {
                    b.append(',');
                }
                b.append("{\"topic\":").append(quote(tp[0])).append(",\"partition\":").append(tp[1])
                        .append(",\"next\":").append(e.getValue()).append('}');
            }
            pending.put(ctx.getCheckpointId(), b.append(']').toString());
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) {}

        @Override
        public void notifyCheckpointComplete(long id) {
            String offsets = pending.get(id);
            for (Iterator<Long> it = pending.keySet().iterator(); it.hasNext(); ) {
                if (it.next() <= id) {
                    it.remove();
                }
            }
            if (offsets != null) {
                emit("{\"event\":\"checkpoint\",\"checkpoint\":" + id + ",\"subtask\":"
                        + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() + ",\"offsets\":" + offsets + "}");
            }
        }
    }

    private static Map<String, String> parseArgs(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name value, got " + args[i]);
            }
            m.put(args[i].substring(2), args[i + 1]);
        }
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException("flag without value: " + args[args.length - 1]);
        }
        return m;
    }

    private static String required(Map<String, String> a, String k) {
        String v = a.get(k);
        if (v == null || v.isEmpty()) {
            throw new IllegalArgumentException("missing --" + k);
        }
        return v;
    }

    /** Client properties from a file (credentials stay off the command line). */
    private static Properties load(String path) throws IOException {
        Properties p = new Properties();
        if (path != null && !path.isEmpty()) {
            try (InputStream in = new FileInputStream(path)) {
                p.load(in);
            }
        }
        return p;
    }

    private static String rootMessage(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getName() + ": " + String.valueOf(t.getMessage());
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
