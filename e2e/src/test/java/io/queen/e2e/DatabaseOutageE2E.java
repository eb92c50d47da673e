package io.queen.e2e;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A database outage as the kubelet sees it. The chart's readiness probe ({@code /ready}, then a
 * database round trip) takes every broker out of the Service; its liveness probe ({@code /status},
 * no database) keeps them running, so no broker is restarted however long the outage lasts. When
 * the database is back they are Ready again without a restart, and every push a broker accepted,
 * before the cut or spooled to its volume during it, is delivered.
 */
class DatabaseOutageE2E {
    /** Longer than the chart's liveness window (3 failures, 10 s apart): a wrong probe would have fired. */
    private static final Duration HOLD = Duration.ofSeconds(45);
    private static final Duration PROBES = Duration.ofMinutes(2);
    private static QueenCluster cluster;

    @BeforeAll
    static void connect() {
        cluster = new QueenCluster();
    }

    @AfterAll
    static void disconnect() {
        cluster.close();
    }

    @Test
    void brokersLeaveTheServiceWithoutRestartingAndComeBackWithEveryAcceptedPush() throws Exception {
        E2eSettings settings = cluster.settings;
        assertFalse(settings.databaseStop().isBlank() || settings.databaseStart().isBlank(),
                "queen.e2e.databaseStop and queen.e2e.databaseStart name the runner's commands");
        await().atMost(PROBES).until(() -> cluster.brokerPods().stream().allMatch(QueenCluster::ready));
        Map<String, Integer> restartsBefore = restartsByUid();
        String queue = "e2e-db-outage";

        Set<String> accepted;
        try (TrafficLoop traffic = new TrafficLoop(cluster.broker, queue, Duration.ofMinutes(10), 100_000)) {
            await().atMost(Duration.ofMinutes(1)).until(() -> traffic.accepted().size() >= 50);
            boolean restarted = false;
            try {
                shell(settings.databaseStop());
                Instant cut = Instant.now();
                await().atMost(PROBES).pollInterval(Duration.ofSeconds(1))
                        .until(() -> cluster.brokerPods().stream().noneMatch(QueenCluster::ready));
                System.out.printf("outage: every broker unready %d s after the cut, %d accepted so far%n",
                        Duration.between(cut, Instant.now()).toSeconds(), traffic.accepted().size());
                // The outage goes on past the liveness window: the brokers stay, unready and unrestarted.
                await().during(HOLD).atMost(HOLD.plusSeconds(30)).pollInterval(Duration.ofSeconds(2))
                        .until(() -> restartsByUid().equals(restartsBefore)
                                && cluster.brokerPods().stream().noneMatch(QueenCluster::ready));
                shell(settings.databaseStart());
                restarted = true;
                Instant back = Instant.now();
                await().atMost(PROBES).pollInterval(Duration.ofSeconds(1))
                        .until(() -> cluster.brokerPods().stream().allMatch(QueenCluster::ready));
                System.out.printf("recovery: every broker Ready %d s after the database came back%n",
                        Duration.between(back, Instant.now()).toSeconds());
            } finally {
                if (!restarted) {
                    shell(settings.databaseStart());
                }
            }
            int atRecovery = traffic.accepted().size();
            await().atMost(Duration.ofMinutes(1)).until(() -> traffic.accepted().size() >= atRecovery + 50);
            traffic.close();
            accepted = traffic.accepted();
            System.out.printf("outage traffic: %d accepted, %d transport errors, refusals %s%n",
                    accepted.size(), traffic.transportErrors(), traffic.refusals().stream().limit(5).toList());
        }

        assertEquals(restartsBefore, restartsByUid(),
                "the same broker pods, none restarted (pod uid -> restarts): liveness never fired");
        Set<String> delivered = new HashSet<>();
        await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(2)).untilAsserted(() -> {
            delivered.addAll(TrafficLoop.drainDelivered(cluster.broker, queue, delivered));
            Set<String> lost = accepted.stream().filter(id -> !delivered.contains(id)).collect(Collectors.toSet());
            assertTrue(lost.isEmpty(), lost.size() + " accepted messages never delivered, e.g. "
                    + lost.stream().limit(5).toList());
        });
    }

    /** Each broker pod's uid with its broker container's restart count. */
    private static Map<String, Integer> restartsByUid() {
        return cluster.brokerPods().stream().collect(Collectors.toMap(p -> p.getMetadata().getUid(),
                DatabaseOutageE2E::brokerRestarts));
    }

    private static int brokerRestarts(Pod pod) {
        List<ContainerStatus> statuses = pod.getStatus() == null ? List.of() : pod.getStatus().getContainerStatuses();
        return statuses == null ? 0 : statuses.stream().filter(s -> "broker".equals(s.getName()))
                .mapToInt(ContainerStatus::getRestartCount).sum();
    }

    private static void shell(String command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder("sh", "-c", command).inheritIO().start();
        if (!process.waitFor(5, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException("'" + command + "' did not finish in 5 minutes");
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException("'" + command + "' exited " + process.exitValue());
        }
    }
}
