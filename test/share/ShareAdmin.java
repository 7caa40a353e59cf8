// The share-group admin calls no JS client has (test/share/eval.ts runs this file with
// `java -cp <broker classpath> ShareAdmin.java CMD ...`, a single-file source launch).
// Every command prints one JSON line on stdout.
//   features BOOTSTRAP                    finalized feature levels
//   earliest BOOTSTRAP GROUP              share.auto.offset.reset=earliest on the group
//   config   BOOTSTRAP GROUP K=V...       set group configs (IncrementalAlterConfigs, GROUP resource)
//   offsets  BOOTSTRAP GROUP TOPIC        per partition: the group's start offset (SPSO), its lag
//                                       (records not yet acknowledged, KIP-1226) and the log end
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

public class ShareAdmin {
  public static void main(String[] a) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", a[1]);
    p.put("request.timeout.ms", "10000");
    p.put("default.api.timeout.ms", "15000");
    try (Admin admin = Admin.create(p)) {
      switch (a[0]) {
        case "features" -> {
          var f = admin.describeFeatures().featureMetadata().get().finalizedFeatures();
          StringBuilder sb = new StringBuilder("{");
          for (var e : f.entrySet()) {
            if (sb.length() > 1) sb.append(',');
            sb.append('"').append(e.getKey()).append("\":").append(e.getValue().maxVersionLevel());
          }
          System.out.println(sb.append('}'));
        }
        case "earliest" -> {
          var r = new ConfigResource(ConfigResource.Type.GROUP, a[2]);
          var op = new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET);
          admin.incrementalAlterConfigs(Map.of(r, List.of(op))).all().get();
          System.out.println("{\"ok\":true}");
        }
        case "config" -> {
          var r = new ConfigResource(ConfigResource.Type.GROUP, a[2]);
          List<AlterConfigOp> ops = new ArrayList<>();
          for (int i = 3; i < a.length; i++) {
            String[] kv = a[i].split("=", 2);
            ops.add(new AlterConfigOp(new ConfigEntry(kv[0], kv[1]), AlterConfigOp.OpType.SET));
          }
          admin.incrementalAlterConfigs(Map.of(r, ops)).all().get();
          System.out.println("{\"ok\":true}");
        }
        case "offsets" -> {
          String group = a[2], topic = a[3];
          var desc = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
          Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
          for (var pi : desc.partitions()) ask.put(new TopicPartition(topic, pi.partition()), OffsetSpec.latest());
          var ends = admin.listOffsets(ask).all().get();
          var spec = new ListShareGroupOffsetsSpec().topicPartitions(ask.keySet());
          var offs = admin.listShareGroupOffsets(Map.of(group, spec)).partitionsToOffsetInfo(group).get();
          StringBuilder sb = new StringBuilder("{\"partitions\":[");
          List<TopicPartition> tps = new ArrayList<>(ask.keySet());
          tps.sort(Comparator.comparingInt(TopicPartition::partition));
          for (int i = 0; i < tps.size(); i++) {
            var tp = tps.get(i);
            var info = offs.get(tp);
            if (i > 0) sb.append(',');
            sb.append("{\"partition\":").append(tp.partition())
              .append(",\"start\":").append(info == null ? -1 : info.startOffset())
              .append(",\"lag\":").append(info == null ? -1 : info.lag().orElse(-1L))
              .append(",\"end\":").append(ends.get(tp).offset()).append('}');
          }
          System.out.println(sb.append("]}"));
        }
        default -> throw new IllegalArgumentException("unknown command " + a[0]);
      }
    }
  }
}
