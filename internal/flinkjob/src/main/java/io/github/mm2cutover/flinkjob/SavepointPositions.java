package io.github.mm2cutover.flinkjob;

import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplit;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplitSerializer;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

/**
 * The reference reader of KafkaSource positions: Flink's own State Processor
 * API reads a savepoint's {@code SourceReaderState} list state of each
 * operator uid given, and the connector's own split serializer decodes each
 * element. Package internal/flinkjob runs it from Go so that tests compare
 * the Go reader with Flink on the same savepoint; the cutover never does.
 *
 * <p>Usage: {@code SavepointPositions SAVEPOINT UID [UID...]}. One JSON line
 * per uid on stdout (logs go to stderr):
 *
 * <pre>
 * {"uid":"kafka-source","operator_id":"<32 hex digits>","splits":[{"topic":"t","partition":0,"starting_offset":42,"stopping_offset":-9223372036854775808}]}
 * {"uid":"missing","operator_id":"...","error":"..."}
 * </pre>
 */
public final class SavepointPositions {
    private SavepointPositions() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: SavepointPositions SAVEPOINT UID [UID...]");
            System.exit(2);
        }
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        Configuration conf = new Configuration();
        conf.setString("taskmanager.memory.network.min", "16m");
        conf.setString("taskmanager.memory.network.max", "16m");
        conf.setString("taskmanager.memory.managed.size", "16m");
        conf.setString("rest.bind-address", "127.0.0.1");
        conf.setString("rest.address", "127.0.0.1");
        conf.setString("rest.bind-port", "0");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        SavepointReader savepoint = SavepointReader.read(env, args[0], new HashMapStateBackend());
        KafkaPartitionSplitSerializer splits = new KafkaPartitionSplitSerializer();
        for (int i = 1; i < args.length; i++) {
            String uid = args[i];
            OperatorIdentifier id = OperatorIdentifier.forUid(uid);
            StringBuilder line = new StringBuilder("{\"uid\":").append(Replicator.quote(uid))
                    .append(",\"operator_id\":").append(Replicator.quote(id.getOperatorId().toHexString()));
            List<KafkaPartitionSplit> read = new ArrayList<>();
            try (CloseableIterator<byte[]> it = savepoint.readListState(id, "SourceReaderState",
                    PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO, BytePrimitiveArraySerializer.INSTANCE).executeAndCollect()) {
                while (it.hasNext()) {
                    read.add(SimpleVersionedSerialization.readVersionAndDeSerialize(splits, it.next()));
                }
            } catch (Exception e) {
                out.println(line.append(",\"error\":").append(Replicator.quote(String.valueOf(e))).append('}'));
                continue;
            }
            line.append(",\"splits\":[");
            for (int j = 0; j < read.size(); j++) {
                KafkaPartitionSplit s = read.get(j);
                if (j > 0) {
                    line.append(',');
                }
                line.append("{\"topic\":").append(Replicator.quote(s.getTopic()))
                        .append(",\"partition\":").append(s.getPartition())
                        .append(",\"starting_offset\":").append(s.getStartingOffset())
                        .append(",\"stopping_offset\":").append(s.getStoppingOffset().orElse(KafkaPartitionSplit.NO_STOPPING_OFFSET))
                        .append('}');
            }
            out.println(line.append("]}"));
        }
        System.exit(0);
    }
}
