package io.queen.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Broker rollouts run by the operator: the schema Job before any broker goes down, one broker
 * unready at most, highest ordinal first, no accepted message lost, and an operator killed in the
 * middle of a roll picking it up without a second broker down.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BrokerRolloutE2E {
    private static final Duration ROLL = Duration.ofMinutes(15);
    /** The broker's log line at the end of its warm-up: its instant, then what it did. */
    private static final Pattern WARMUP_DONE = Pattern.compile(
            "^(\\S+Z) +INFO +io\\.queen\\.broker\\.warmup\\.SelfWarmup - warm-up done: (.*)$", Pattern.MULTILINE);
    private static final Duration TRAFFIC_LIMIT = Duration.ofMinutes(20);
    private static final long TRAFFIC_MAX_MESSAGES = 200_000;
    private static QueenCluster cluster;

    @BeforeAll
    static void connect() {
        cluster = new QueenCluster();
    }

    @AfterAll
    static void disconnect() {
        cluster.close();
    }

    @BeforeEach
    void startFromACompleteRollout() {
        await().atMost(ROLL).pollInterval(Duration.ofSeconds(2)).until(cluster::rolloutComplete);
    }

    @Test
    @Order(1)
    void helmUpgradeToANewImageAppliesTheSchemaFirstThenRollsOneBrokerAtATime() throws Exception {
        String upgradeTag = cluster.settings.upgradeTag();
        assertFalse(upgradeTag.isBlank(), "queen.e2e.upgradeTag names a second broker image tag loaded into the cluster");
        String oldImage = brokerImage(cluster.brokerStatefulSet());
        String newImage = oldImage.substring(0, oldImage.lastIndexOf(':') + 1) + upgradeTag;
        String revisionBefore = cluster.brokerStatefulSet().getStatus().getUpdateRevision();
        String queue = "e2e-roll-traffic";

        Set<String> accepted;
        List<RollWatcher.Deletion> deletions;
        int maxUnready;
        try (RollWatcher watcher = new RollWatcher(cluster);
             TrafficLoop traffic = new TrafficLoop(cluster.broker, queue, TRAFFIC_LIMIT, TRAFFIC_MAX_MESSAGES)) {
            await().atMost(Duration.ofMinutes(1)).until(() -> traffic.accepted().size() >= 50);
            cluster.helmUpgrade("broker.image.tag=" + upgradeTag);
            // The StatefulSet controller publishes the new revision asynchronously: until it does, the
            // old roll still reads as complete.
            await().atMost(ROLL).pollInterval(Duration.ofSeconds(2)).until(() ->
                    !revisionBefore.equals(cluster.brokerStatefulSet().getStatus().getUpdateRevision())
                            && cluster.rolloutComplete());
            traffic.close();
            accepted = traffic.accepted();
            deletions = watcher.deletions();
            maxUnready = watcher.maxUnready();
            System.out.printf("roll: %d accepted, %d transport errors, refusals %s, deletions %s, sample errors %s%n",
                    accepted.size(), traffic.transportErrors(), traffic.refusals(), deletions, watcher.sampleErrors());
        }

        Job schemaJob = schemaJobFor(newImage);
        assertNotNull(schemaJob.getStatus().getSucceeded(), "the schema Job for " + newImage + " succeeded");
        assertTrue(schemaJob.getStatus().getSucceeded() > 0, "the schema Job for " + newImage + " succeeded");
        Instant schemaDone = Instant.parse(schemaJob.getStatus().getCompletionTime());
        assertEquals(newImage, cluster.brokerStatefulSet().getMetadata().getAnnotations()
                .get(QueenCluster.SCHEMA_APPLIED_ANNOTATION));

        assertEquals(List.of(2, 1, 0), deletions.stream().map(RollWatcher.Deletion::ordinal).toList(),
                "each broker replaced once, highest ordinal first: " + deletions);
        for (RollWatcher.Deletion deletion : deletions) {
            assertEquals(oldImage, deletion.image(), "only brokers of the old image are deleted");
            assertFalse(deletion.requestedAt().isBefore(schemaDone), deletion.pod() + " went down at "
                    + deletion.requestedAt() + ", before the schema Job finished at " + schemaDone);
        }
        assertTrue(maxUnready <= 1, "at most one broker unready at any moment, saw " + maxUnready);
        for (Pod pod : cluster.brokerPods()) {
            assertReadyOnlyAfterItsWarmUp(pod);
        }

        assertTrue(accepted.size() > 50, "traffic flowed during the roll");
        Set<String> delivered = new HashSet<>();
        // Pushes a terminating broker spooled are replayed when its successor boots: give them time.
        await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(2)).untilAsserted(() -> {
            delivered.addAll(TrafficLoop.drainDelivered(cluster.broker, queue, delivered));
            Set<String> lost = accepted.stream().filter(id -> !delivered.contains(id)).collect(Collectors.toSet());
            assertTrue(lost.isEmpty(), lost.size() + " accepted messages never delivered, e.g. "
                    + lost.stream().limit(5).toList());
        });
    }

    @Test
    @Order(2)
    void anOperatorKilledMidRollResumesWithoutTakingTwoBrokersDown() throws Exception {
        String revisionBefore = cluster.brokerStatefulSet().getStatus().getUpdateRevision();
        Set<String> operatorsBefore = cluster.operatorPods().stream().map(p -> p.getMetadata().getUid())
                .collect(Collectors.toSet());
        List<RollWatcher.Deletion> deletions;
        int maxUnready;
        try (RollWatcher watcher = new RollWatcher(cluster)) {
            // A restart request goes through the operator's gate like an upgrade (no schema change).
            QueenCluster.retryingConflicts(() -> cluster.client.apps().statefulSets()
                    .inNamespace(cluster.settings.namespace()).withName(cluster.settings.brokerStatefulSet()).edit(sts -> {
                        sts.getMetadata().getAnnotations().put(QueenCluster.RESTART_ANNOTATION, Instant.now().toString());
                        return sts;
                    }));
            await().atMost(ROLL).until(() -> !watcher.deletions().isEmpty());
            // Kill every operator replica at once, with no grace: no chance to finish the step in hand.
            cluster.client.pods().inNamespace(cluster.settings.namespace())
                    .withLabel("app.kubernetes.io/instance", cluster.settings.release())
                    .withLabel("app.kubernetes.io/component", "operator").withGracePeriod(0).delete();
            await().atMost(ROLL).pollInterval(Duration.ofSeconds(2)).until(() ->
                    !revisionBefore.equals(cluster.brokerStatefulSet().getStatus().getUpdateRevision())
                            && cluster.rolloutComplete());
            deletions = watcher.deletions();
            maxUnready = watcher.maxUnready();
            System.out.printf("roll with operator killed: deletions %s, sample errors %s%n", deletions, watcher.sampleErrors());
        }
        assertTrue(maxUnready <= 1, "at most one broker unready at any moment, saw " + maxUnready);
        assertEquals(List.of(2, 1, 0), deletions.stream().map(RollWatcher.Deletion::ordinal).toList(),
                "each broker replaced once, in order, across the operator restart: " + deletions);
        List<Pod> operators = cluster.operatorPods();
        assertTrue(operators.stream().anyMatch(QueenCluster::ready), "a new operator is Ready");
        assertTrue(operators.stream().noneMatch(p -> operatorsBefore.contains(p.getMetadata().getUid())),
                "the killed operator is gone");
    }

    /**
     * The readiness probe is GET /ready: a new broker turns Ready only once its warm-up before
     * readiness ended (the chart's broker.warmup), so the Service sends it traffic compiled. The
     * log's instant is in milliseconds, the condition's in whole seconds.
     */
    private static void assertReadyOnlyAfterItsWarmUp(Pod pod) {
        String name = pod.getMetadata().getName();
        String log = cluster.client.pods().inNamespace(cluster.settings.namespace()).withName(name)
                .inContainer("broker").getLog();
        Matcher done = WARMUP_DONE.matcher(log);
        assertTrue(done.find(), name + " logged no completed warm-up: "
                + log.lines().filter(l -> l.contains("warm-up")).toList());
        Instant warmedUp = Instant.parse(done.group(1)).truncatedTo(ChronoUnit.SECONDS);
        String readySince = pod.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType()))
                .findFirst().orElseThrow().getLastTransitionTime();
        assertFalse(Instant.parse(readySince).isBefore(warmedUp), name + " turned Ready at " + readySince
                + ", before its warm-up ended at " + done.group(1));
        System.out.printf("%s: warm-up ended %s (%s), Ready since %s%n", name, done.group(1), done.group(2), readySince);
    }

    private static String brokerImage(StatefulSet sts) {
        return sts.getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> "broker".equals(c.getName())).findFirst().orElseThrow().getImage();
    }

    private static Job schemaJobFor(String image) {
        return cluster.client.batch().v1().jobs().inNamespace(cluster.settings.namespace())
                .withLabel("app.kubernetes.io/component", "schema").list().getItems().stream()
                .filter(j -> image.equals(j.getSpec().getTemplate().getSpec().getContainers().get(0).getImage()))
                .findFirst().orElseThrow(() -> new AssertionError("no schema Job for " + image));
    }
}
