package io.queen.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The KV mode's keys and call bodies. Client c owns the keys {@code k<c*perClient>} to
 * {@code k<(c+1)*perClient - 1>}, so clients never wait on each other's row locks (the broker's
 * figure and the ceiling's alike); a call names {@code batch} consecutive keys of its client's slice
 * from {@code start}, wrapping, so its keys are distinct as one KV call requires.
 */
final class KvRequests {
    static final String NAMESPACE = "bench";
    private static final String PAD = "x".repeat(96);

    private KvRequests() {
    }

    /** The keys of one call. */
    static List<String> keys(int client, int perClient, int start, int batch) {
        List<String> keys = new ArrayList<>(batch);
        for (int i = 0; i < batch; i++) {
            keys.add("k" + ((long) client * perClient + Math.floorMod(start + i, perClient)));
        }
        return keys;
    }

    /** The value written under a key by call {@code seq}: a small JSON object, about 120 bytes. */
    static String value(long seq) {
        return "{\"n\":" + seq + ",\"pad\":\"" + PAD + "\"}";
    }

    /** {@code POST /api/v1/kv} of a put per key, each forever (no expiry), the value of {@code seq}. */
    static String puts(List<String> keys, long seq) {
        StringBuilder sb = new StringBuilder(keys.size() * 180).append("{\"operations\":[");
        for (int i = 0; i < keys.size(); i++) {
            sb.append(i == 0 ? "" : ",").append("{\"op\":\"put\",\"ns\":\"").append(NAMESPACE)
              .append("\",\"key\":\"").append(keys.get(i)).append("\",\"value\":").append(value(seq))
              .append(",\"forever\":true}");
        }
        return sb.append("]}").toString();
    }

    /** {@code POST /api/v1/kv} of a get per key. */
    static String gets(List<String> keys) {
        StringBuilder sb = new StringBuilder(keys.size() * 48).append("{\"operations\":[");
        for (int i = 0; i < keys.size(); i++) {
            sb.append(i == 0 ? "" : ",").append("{\"op\":\"get\",\"ns\":\"").append(NAMESPACE)
              .append("\",\"key\":\"").append(keys.get(i)).append("\"}");
        }
        return sb.append("]}").toString();
    }
}
