package offsetfrontier.bench;

import io.confluent.parallelconsumer.ParallelConsumerOptions;
import io.confluent.parallelconsumer.ParallelConsumerOptions.ProcessingOrder;
import io.confluent.parallelconsumer.ParallelStreamProcessor;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * The Java side of {@code npm run bench:pc} (driven by bench/pc/run.ts, one process per measured run).
 *
 * <pre>
 *   java -cp CLASSPATH offsetfrontier.bench.PcBench pc|plain BROKERS TOPIC GROUP RECORDS ORDERING CONCURRENCY WORK_MS PASSES
 * </pre>
 *
 * <ul>
 *   <li>{@code pc}: Confluent's Parallel Consumer, default options except {@code ordering} and, when
 *       CONCURRENCY &gt; 0, {@code maxConcurrency}; the handler sleeps a uniform random [0, WORK_MS) ms
 *       (none when WORK_MS is 0);</li>
 *   <li>{@code plain}: a plain {@link KafkaConsumer} poll loop that only counts records
 *       (auto-commit off, no commits: the client's floor). ORDERING and CONCURRENCY are ignored.</li>
 * </ul>
 *
 * PASSES: how many times the topic is read from the start, each pass by a new consumer in a new
 * group ({@code GROUP-p1}, {@code GROUP-p2}, …), the previous one closed first: pass 1 is a cold
 * process, later passes run with the JIT warmed by it.
 *
 * Protocol (one JSON object per stdout line): {@code ready} once the first consumer is created,
 * {@code done} per pass when RECORDS records have finished (first record started, last finished:
 * epoch ms for the driver's committed-offset clock, and a monotonic duration); after the last
 * pass the process waits for a line on stdin, closes the consumer, prints {@code closed} and
 * exits 0. Any failure: a message on stderr and exit 1.
 */
public final class PcBench {
  private PcBench() {}

  /** Epoch milliseconds with microsecond precision (the driver compares it with its own clock). */
  static double epochMs() {
    Instant t = Instant.now();
    return t.getEpochSecond() * 1000.0 + t.getNano() / 1e6;
  }

  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  /** CPU time of this whole process (every thread: PC's pool, the client's I/O thread, GC, JIT), ns. */
  static long cpuNanos() {
    return OS.getProcessCpuTime();
  }

  static void emit(String json) {
    System.out.println(json);
    System.out.flush();
  }

  /** Counts finished records; the first start and the N-th finish are stamped exactly once. */
  static final class Counter {
    final long target;
    final AtomicLong count = new AtomicLong();
    final AtomicLong firstNanos = new AtomicLong(Long.MIN_VALUE);
    volatile double firstEpochMs;
    /** Records delivered with the first one (the first poll's size for the plain loop; 1 for PC's handler). */
    volatile long firstBatch;
    volatile long firstCpu;
    volatile long lastCpu;
    volatile long lastNanos;
    volatile double lastEpochMs;
    final CountDownLatch done = new CountDownLatch(1);

    Counter(long target) {
      this.target = target;
    }

    void started(long batch) {
      if (firstNanos.get() == Long.MIN_VALUE) {
        long t = System.nanoTime();
        double e = epochMs();
        if (firstNanos.compareAndSet(Long.MIN_VALUE, t)) {
          firstCpu = cpuNanos();
          firstEpochMs = e;
          firstBatch = batch;
        }
      }
    }

    void finished(long n) {
      if (count.addAndGet(n) >= target && done.getCount() > 0) {
        synchronized (this) {
          if (done.getCount() > 0) {
            lastNanos = System.nanoTime();
            lastEpochMs = epochMs();
            lastCpu = cpuNanos();
            done.countDown();
          }
        }
      }
    }

    String doneJson(int pass) {
      double seconds = (lastNanos - firstNanos.get()) / 1e9;
      return String.format(
          "{\"event\":\"done\",\"pass\":%d,\"count\":%d,\"firstBatch\":%d,\"firstEpochMs\":%.3f,\"lastEpochMs\":%.3f,\"seconds\":%.6f,\"cpuSeconds\":%.6f}",
          pass, count.get(), firstBatch, firstEpochMs, lastEpochMs, seconds, (lastCpu - firstCpu) / 1e9);
    }
  }

  static Properties consumerProps(String brokers, String group, boolean pc) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, pc ? "bench-pc" : "bench-plain-java");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    // PC requires auto-commit off (it commits itself); the plain loop does not commit at all.
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    return p;
  }

  /** PC's version from the pom.properties Maven put in its jar (its manifest carries none). */
  static String pcVersion() {
    String res = "/META-INF/maven/io.confluent.parallelconsumer/parallel-consumer-core/pom.properties";
    try (java.io.InputStream in = ParallelStreamProcessor.class.getResourceAsStream(res)) {
      if (in == null) return null;
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (java.io.IOException e) {
      return null;
    }
  }

  static String versionsJson() {
    String pcVersion = pcVersion();
    return String.format(
        "{\"event\":\"ready\",\"java\":\"%s\",\"javaVm\":\"%s\",\"kafkaClients\":\"%s\",\"parallelConsumer\":%s,\"commitIntervalMs\":%d,\"defaultMaxConcurrency\":%d}",
        System.getProperty("java.version"),
        System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"),
        AppInfoParser.getVersion(),
        pcVersion == null ? "null" : "\"" + pcVersion + "\"",
        ParallelConsumerOptions.DEFAULT_COMMIT_INTERVAL.toMillis(),
        ParallelConsumerOptions.DEFAULT_MAX_CONCURRENCY);
  }

  static void awaitCloseLine() throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    in.readLine(); // any line, or EOF when the driver went away
  }

  /** One pass; the last one waits for the driver's close line before closing. */
  static void runPc(String brokers, String topic, String group, long records, String ordering, int concurrency, double workMs,
      int pass, boolean last) throws Exception {
    KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(brokers, group, true));
    ParallelConsumerOptions.ParallelConsumerOptionsBuilder<String, String> b =
        ParallelConsumerOptions.<String, String>builder()
            .consumer(consumer)
            .ordering(ProcessingOrder.valueOf(ordering.toUpperCase()));
    if (concurrency > 0) b.maxConcurrency(concurrency);
    ParallelStreamProcessor<String, String> pc = ParallelStreamProcessor.createEosStreamProcessor(b.build());
    if (pass == 1) emit(versionsJson());
    Counter c = new Counter(records);
    long workNanosMax = (long) (workMs * 1e6);
    pc.subscribe(List.of(topic));
    pc.poll(ctx -> {
      c.started(ctx.size());
      if (workNanosMax > 0) {
        long nanos = (long) (ThreadLocalRandom.current().nextDouble() * workNanosMax);
        long until = System.nanoTime() + nanos;
        // parkNanos may return early (spurious wake-ups): park until the deadline.
        for (long left = nanos; left > 0; left = until - System.nanoTime()) LockSupport.parkNanos(left);
      }
      c.finished(ctx.size());
    });
    c.done.await();
    emit(c.doneJson(pass));
    if (last) awaitCloseLine();
    long t0 = System.nanoTime();
    pc.close();
    if (last) emit(String.format("{\"event\":\"closed\",\"count\":%d,\"closeSeconds\":%.3f}", c.count.get(), (System.nanoTime() - t0) / 1e9));
  }

  /** One pass of the plain loop; the last one waits for the driver's close line. */
  static void runPlain(String brokers, String topic, String group, long records, int pass, boolean last) throws Exception {
    if (pass == 1) emit(versionsJson());
    Counter c = new Counter(records);
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(brokers, group, false))) {
      consumer.subscribe(List.of(topic));
      while (c.done.getCount() > 0) {
        ConsumerRecords<String, String> polled = consumer.poll(Duration.ofMillis(100));
        if (polled.isEmpty()) continue;
        c.started(polled.count());
        c.finished(polled.count());
      }
      emit(c.doneJson(pass));
      if (last) awaitCloseLine();
    }
    if (last) emit(String.format("{\"event\":\"closed\",\"count\":%d,\"closeSeconds\":0}", c.count.get()));
  }

  public static void main(String[] args) {
    if (args.length != 9) {
      System.err.println("usage: PcBench pc|plain BROKERS TOPIC GROUP RECORDS ORDERING CONCURRENCY WORK_MS PASSES");
      System.exit(2);
    }
    try {
      String side = args[0];
      long records = Long.parseLong(args[4]);
      int concurrency = Integer.parseInt(args[6]);
      double workMs = Double.parseDouble(args[7]);
      int passes = Integer.parseInt(args[8]);
      if (!side.equals("pc") && !side.equals("plain")) throw new IllegalArgumentException("side must be pc or plain; got " + side);
      if (passes < 1) throw new IllegalArgumentException("PASSES must be at least 1; got " + passes);
      for (int pass = 1; pass <= passes; pass++) {
        String group = args[3] + "-p" + pass;
        if (side.equals("pc")) runPc(args[1], args[2], group, records, args[5], concurrency, workMs, pass, pass == passes);
        else runPlain(args[1], args[2], group, records, pass, pass == passes);
      }
      System.exit(0);
    } catch (Throwable e) {
      e.printStackTrace();
      System.exit(1);
    }
  }
}
