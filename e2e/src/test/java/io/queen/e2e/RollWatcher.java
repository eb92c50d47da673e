package io.queen.e2e;

import io.fabric8.kubernetes.api.model.Pod;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Samples the broker pods every half second while a rollout runs, and keeps what the scenarios
 * assert on: the most brokers unready at once (missing pods count as unready), and every pod
 * deletion with its ordinal and the server's deletion time. The API server sets a pod's
 * deletionTimestamp to the delete request's time plus its grace period, so the request time is
 * exact to the second, whatever the sampling interval.
 */
final class RollWatcher implements AutoCloseable {
    /** One broker pod deletion, as the API server recorded it. */
    record Deletion(String pod, int ordinal, String uid, Instant requestedAt, String image) {
    }

    private static final long SAMPLE_MILLIS = 500;

    private final QueenCluster cluster;
    private final int replicas;
    private final Pattern podName;
    private final Thread thread;
    private final AtomicInteger maxUnready = new AtomicInteger();
    private final List<Deletion> deletions = new ArrayList<>();
    private final Set<String> seenDeleted = new HashSet<>();
    private final List<String> sampleErrors = new ArrayList<>();
    private volatile boolean running = true;

    RollWatcher(QueenCluster cluster) {
        this.cluster = cluster;
        this.replicas = cluster.brokerStatefulSet().getSpec().getReplicas();
        this.podName = Pattern.compile(Pattern.quote(cluster.settings.brokerStatefulSet()) + "-(\\d+)");
        this.thread = Thread.ofPlatform().name("roll-watcher").daemon(true).start(this::run);
    }

    private void run() {
        Map<String, Pod> lastSeen = new HashMap<>();
        while (running) {
            try {
                List<Pod> pods = cluster.brokerPods();
                long ready = pods.stream().filter(QueenCluster::ready).count();
                maxUnready.accumulateAndGet((int) (replicas - ready), Math::max);
                Map<String, Pod> byUid = new HashMap<>();
                for (Pod pod : pods) {
                    byUid.put(pod.getMetadata().getUid(), pod);
                    if (pod.getMetadata().getDeletionTimestamp() != null) {
                        Instant due = Instant.parse(pod.getMetadata().getDeletionTimestamp());
                        long grace = pod.getMetadata().getDeletionGracePeriodSeconds() == null ? 0
                                : pod.getMetadata().getDeletionGracePeriodSeconds();
                        record(pod, due.minusSeconds(grace));
                    }
                }
                // A pod gone between two samples without being seen terminating (grace shorter than a sample).
                for (Map.Entry<String, Pod> previous : lastSeen.entrySet()) {
                    if (!byUid.containsKey(previous.getKey())) {
                        record(previous.getValue(), Instant.now());
                    }
                }
                lastSeen = byUid;
            } catch (RuntimeException e) {
                synchronized (sampleErrors) {
                    sampleErrors.add(e.toString());
                }
            }
            try {
                Thread.sleep(SAMPLE_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void record(Pod pod, Instant requestedAt) {
        synchronized (deletions) {
            if (!seenDeleted.add(pod.getMetadata().getUid())) {
                return;
            }
            Matcher m = podName.matcher(pod.getMetadata().getName());
            int ordinal = m.matches() ? Integer.parseInt(m.group(1)) : -1;
            deletions.add(new Deletion(pod.getMetadata().getName(), ordinal, pod.getMetadata().getUid(), requestedAt,
                    pod.getSpec().getContainers().get(0).getImage()));
        }
    }

    int maxUnready() {
        return maxUnready.get();
    }

    /** Deletions in the order the API server received them. */
    List<Deletion> deletions() {
        synchronized (deletions) {
            return deletions.stream().sorted(Comparator.comparing(Deletion::requestedAt)).toList();
        }
    }

    List<String> sampleErrors() {
        synchronized (sampleErrors) {
            return List.copyOf(sampleErrors);
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(5_000);
    }
}
