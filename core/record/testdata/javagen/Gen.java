import org.apache.kafka.common.record.*;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import java.nio.file.*;
import java.nio.ByteBuffer;

public class Gen {
  public static void main(String[] a) throws Exception {
    for (CompressionType t : CompressionType.values()) {
      Compression c = Compression.of(t).build();
      SimpleRecord[] rs = new SimpleRecord[50];
      for (int i = 0; i < 50; i++) {
        Header[] hs = i % 5 == 0 ? new Header[]{new RecordHeader("h" + i, ("hv" + i).getBytes())} : new Header[0];
        byte[] key = i % 7 == 0 ? null : ("key-" + i).getBytes();
        rs[i] = new SimpleRecord(1700000000000L + i * 3, key, ("value-" + i + "-".repeat(i * 20)).getBytes(), hs);
      }
      MemoryRecords m = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V2, 100L, c, TimestampType.CREATE_TIME, rs);
      ByteBuffer b = m.buffer();
      byte[] out = new byte[b.remaining()];
      b.get(out);
      Files.write(Paths.get(a[0], "java-" + t.name + ".batch"), out);
    }
  }
}
