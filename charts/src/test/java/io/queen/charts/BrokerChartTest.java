package io.queen.charts;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the rendered broker StatefulSet, its Services and its PodDisruptionBudget promise, for every value set. */
class BrokerChartTest {
    /** The broker drains in-flight requests for up to this long on SIGTERM (Broker.start: shutdownGracePeriod). */
    private static final int BROKER_DRAIN_SECONDS = 20;
    /** The broker's long-poll default when DEFAULT_TIMEOUT is not set (broker README). */
    private static final int DEFAULT_LONG_POLL_MS = 30_000;
    /** The owner-secret annotation the operator's schema Job reads (SchemaJobs.OWNER_SECRET_ANNOTATION). */
    private static final String OWNER_SECRET_ANNOTATION = "queen.io/schema-owner-secret";

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void brokersNeverSeeTheOwnerSecret(ValueSet valueSet) {
        RenderedChart chart = RenderedChart.of(valueSet);
        StatefulSet sts = chart.brokerStatefulSet();
        String ownerSecret = sts.getMetadata().getAnnotations().get(OWNER_SECRET_ANNOTATION);
        assertNotNull(ownerSecret, "the StatefulSet names the owner Secret for the operator's schema Job");
        assertFalse(secretsReferencedBy(sts.getSpec().getTemplate().getSpec()).contains(ownerSecret),
                valueSet + ": broker pods reference the owner Secret " + ownerSecret);
        // Nothing else in the release mentions it either (not the operator, not a volume): the annotation is the only hand-over.
        Matcher mentions = Pattern.compile("(?<![\\w-])" + Pattern.quote(ownerSecret) + "(?![\\w-])").matcher(chart.manifest());
        int count = 0;
        while (mentions.find()) {
            count++;
        }
        assertEquals(1, count, valueSet + ": the owner Secret must appear only in the StatefulSet annotation");
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void runtimeCredentialsAreEnvEntriesTheSchemaJobReplaces(ValueSet valueSet) {
        Container broker = brokerContainer(RenderedChart.of(valueSet).brokerStatefulSet());
        // SchemaJobs.build copies env minus PG_USER/PG_PASSWORD, and all of envFrom, then adds the owner Secret.
        assertTrue(broker.getEnvFrom() == null || broker.getEnvFrom().isEmpty(),
                "envFrom would be copied into the schema Job as it is");
        for (String name : List.of("PG_USER", "PG_PASSWORD")) {
            EnvVar credential = env(broker, name).orElseThrow(() -> new AssertionError(name + " is not set"));
            assertNotNull(credential.getValueFrom().getSecretKeyRef(), name + " comes from the runtime Secret");
        }
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void brokerStatefulSetIsOnDeleteAndNeverAppliesTheSchema(ValueSet valueSet) {
        StatefulSet sts = RenderedChart.of(valueSet).brokerStatefulSet();
        assertEquals("OnDelete", sts.getSpec().getUpdateStrategy().getType());
        Container broker = brokerContainer(sts);
        assertEquals("0", envValue(broker, "QUEEN_APPLY_SCHEMA"));
        assertEquals("1", envValue(broker, "QUEEN_PRODUCTION"), "never an embedded database");
        // The operator's rollout controller selects these labels (BrokerRolloutReconciler.SELECTOR) and
        // its pod informer app.kubernetes.io/part-of=queen.
        assertEquals("queen", sts.getMetadata().getLabels().get("app.kubernetes.io/part-of"));
        assertEquals("broker", sts.getMetadata().getLabels().get("app.kubernetes.io/component"));
        assertEquals("queen", sts.getSpec().getTemplate().getMetadata().getLabels().get("app.kubernetes.io/part-of"));
        assertEquals("broker", broker.getName(), "SchemaJobs.BROKER_CONTAINER");
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void readinessProbesReadyAndLivenessProbesStatus(ValueSet valueSet) {
        Container broker = brokerContainer(RenderedChart.of(valueSet).brokerStatefulSet());
        assertEquals("/ready", broker.getReadinessProbe().getHttpGet().getPath());
        assertEquals("50000", envValue(broker, "QUEEN_WARMUP_MESSAGES"));
        assertEquals("30", envValue(broker, "QUEEN_WARMUP_MAX_SECONDS"));
        assertEquals("/status", broker.getLivenessProbe().getHttpGet().getPath());
        assertEquals("/status", broker.getStartupProbe().getHttpGet().getPath());
        assertEquals("http", broker.getReadinessProbe().getHttpGet().getPort().getStrVal());
        assertEquals(6632, broker.getPorts().stream().filter(p -> "http".equals(p.getName())).findFirst()
                .orElseThrow().getContainerPort());
        assertEquals("6632", envValue(broker, "PORT"));
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void terminationGraceOutlastsThePreStopPauseTheDrainAndTheLongestLongPoll(ValueSet valueSet) {
        StatefulSet sts = RenderedChart.of(valueSet).brokerStatefulSet();
        Container broker = brokerContainer(sts);
        long longPollSeconds = env(broker, "DEFAULT_TIMEOUT").map(v -> Long.parseLong(v.getValue()))
                .orElse((long) DEFAULT_LONG_POLL_MS) / 1000;
        long preStopSeconds = broker.getLifecycle() == null ? 0
                : Long.parseLong(broker.getLifecycle().getPreStop().getExec().getCommand().get(1));
        long grace = sts.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
        assertTrue(grace > preStopSeconds + BROKER_DRAIN_SECONDS + longPollSeconds, valueSet + ": grace " + grace
                + " s is not longer than preStop " + preStopSeconds + " s + drain " + BROKER_DRAIN_SECONDS
                + " s + long-poll " + longPollSeconds + " s");
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void brokersWriteOnlyToTmpAndTheirSpool(ValueSet valueSet) {
        StatefulSet sts = RenderedChart.of(valueSet).brokerStatefulSet();
        PodSpec pod = sts.getSpec().getTemplate().getSpec();
        Container broker = brokerContainer(sts);
        String spoolDir = envValue(broker, "FILE_BUFFER_DIR");
        Set<String> claimTemplates = new HashSet<>();
        if (sts.getSpec().getVolumeClaimTemplates() != null) {
            sts.getSpec().getVolumeClaimTemplates().forEach(c -> claimTemplates.add(c.getMetadata().getName()));
        }
        Set<String> mountPaths = new HashSet<>();
        broker.getVolumeMounts().forEach(mount -> {
            Optional<Volume> volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst();
            if (Boolean.TRUE.equals(mount.getReadOnly()) && volume.map(v -> v.getSecret() != null).orElse(false)) {
                // The listener certificate (values: tls): read, never written.
                return;
            }
            mountPaths.add(mount.getMountPath());
            assertTrue(claimTemplates.contains(mount.getName()) || volume.map(v -> v.getEmptyDir() != null).orElse(false),
                    mount.getName() + " is neither an emptyDir nor a claim template");
        });
        assertEquals(Set.of("/tmp", spoolDir), mountPaths, "the writable paths");
        assertFalse(Boolean.TRUE.equals(pod.getAutomountServiceAccountToken()), "brokers need no API token");
    }

    /**
     * A push spooled during a database outage was answered 201: the spool must outlive the pod, so it
     * is the broker's own claim (the same ordinal gets it back and replays it), never an emptyDir.
     */
    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void theSpoolLivesOnEachBrokersOwnPersistentVolume(ValueSet valueSet) {
        StatefulSet sts = RenderedChart.of(valueSet).brokerStatefulSet();
        Container broker = brokerContainer(sts);
        String spoolDir = envValue(broker, "FILE_BUFFER_DIR");
        String volume = broker.getVolumeMounts().stream().filter(m -> m.getMountPath().equals(spoolDir))
                .findFirst().orElseThrow(() -> new AssertionError("nothing is mounted at " + spoolDir)).getName();
        assertTrue(sts.getSpec().getTemplate().getSpec().getVolumes().stream().noneMatch(v -> v.getName().equals(volume)),
                valueSet + ": " + volume + " is a pod volume (an emptyDir dies with the pod), not a claim template");
        PersistentVolumeClaim claim = sts.getSpec().getVolumeClaimTemplates().stream()
                .filter(c -> c.getMetadata().getName().equals(volume)).findFirst()
                .orElseThrow(() -> new AssertionError(valueSet + ": no claim template named " + volume));
        assertEquals(List.of("ReadWriteOnce"), claim.getSpec().getAccessModes());
        assertNotNull(claim.getSpec().getResources().getRequests().get("storage"), "the claim asks for a size");
    }

    @Test
    void turningTheSpoolVolumeOffIsRefused() {
        IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> RenderedChart.withValues("broker:\n  persistence:\n    enabled: false\n"));
        assertTrue(String.valueOf(refused.getMessage()).contains("persistent volume"), refused.getMessage());
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void aPodDisruptionBudgetLetsOneBrokerDownAtATime(ValueSet valueSet) {
        RenderedChart chart = RenderedChart.of(valueSet);
        StatefulSet sts = chart.brokerStatefulSet();
        PodDisruptionBudget pdb = chart.one(PodDisruptionBudget.class, sts.getMetadata().getName());
        assertEquals(1, pdb.getSpec().getMaxUnavailable().getIntVal());
        assertEquals(sts.getSpec().getSelector().getMatchLabels(), pdb.getSpec().getSelector().getMatchLabels());
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void aClusterIpServiceAndAHeadlessServiceSelectTheBrokers(ValueSet valueSet) {
        RenderedChart chart = RenderedChart.of(valueSet);
        StatefulSet sts = chart.brokerStatefulSet();
        Map<String, String> podLabels = sts.getSpec().getTemplate().getMetadata().getLabels();
        Service service = chart.one(Service.class, sts.getMetadata().getName());
        Service headless = chart.one(Service.class, sts.getSpec().getServiceName());
        for (Service s : List.of(service, headless)) {
            assertTrue(podLabels.entrySet().containsAll(s.getSpec().getSelector().entrySet()), s.getMetadata().getName()
                    + " does not select the broker pods");
            assertEquals("http", s.getSpec().getPorts().get(0).getTargetPort().getStrVal());
        }
        assertNull(service.getSpec().getClusterIP(), "the ClusterIP Service gets an address");
        assertEquals("None", headless.getSpec().getClusterIP());
        assertTrue(headless.getSpec().getPublishNotReadyAddresses(), "pod DNS resolves during a rollout");
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void imagesAreTaggedWithTheVersionInThePom(ValueSet valueSet) {
        RenderedChart chart = RenderedChart.of(valueSet);
        String version = RepositoryPaths.version();
        assertTrue(brokerContainer(chart.brokerStatefulSet()).getImage().endsWith(":" + version));
        assertTrue(chart.operatorDeployment().getSpec().getTemplate().getSpec().getContainers().get(0).getImage()
                .endsWith(":" + version));
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void theHeapIsAFifthOfTheMemoryLimitAndGrowsOnDemand(ValueSet valueSet) {
        Container broker = brokerContainer(RenderedChart.of(valueSet).brokerStatefulSet());
        // The rest of the JVM's options are the image's broker/jvm.options; no pre-touched heap.
        assertEquals("-XX:MaxRAMPercentage=20.0 -XX:MinRAMPercentage=20.0", envValue(broker, "JDK_JAVA_OPTIONS"));
    }

    @Test
    void theDefaultPodIsSmallAndRequestsWhatABusyBrokerHolds() {
        Container broker = brokerContainer(RenderedChart.of(ValueSet.DEFAULTS).brokerStatefulSet());
        // Measured (issue #25): peak RSS under throughput 225-241 MB with the chart's JVM options and a
        // 20% heap, about 200 MB at a steady 1,000 msg/s.
        assertEquals(new Quantity("512Mi"), broker.getResources().getLimits().get("memory"));
        assertEquals(new Quantity("256Mi"), broker.getResources().getRequests().get("memory"));
    }

    @Test
    void aFixedHeapIsCommittedAndTouchedAtStart() throws IOException {
        Container broker = brokerContainer(RenderedChart.withValues(
                "broker:\n  heap:\n    percentOfLimit: 60\n    fixed: true\n").brokerStatefulSet());
        assertEquals("-XX:MaxRAMPercentage=60.0 -XX:MinRAMPercentage=60.0 -XX:InitialRAMPercentage=60.0 -XX:MaxHeapFreeRatio=100 -XX:+AlwaysPreTouch",
                envValue(broker, "JDK_JAVA_OPTIONS"));
    }

    @Test
    void theOwnerSecretKeysReachTheOperatorAsAnnotations() throws IOException {
        Map<String, String> defaults = RenderedChart.of(ValueSet.DEFAULTS).brokerStatefulSet().getMetadata().getAnnotations();
        assertEquals("PG_USER", defaults.get("queen.io/schema-owner-user-key"));
        assertEquals("PG_PASSWORD", defaults.get("queen.io/schema-owner-password-key"));
        Map<String, String> mapped = RenderedChart.withValues("schema:\n  userKey: username\n  passwordKey: password\n")
                .brokerStatefulSet().getMetadata().getAnnotations();
        assertEquals("username", mapped.get("queen.io/schema-owner-user-key"));
        assertEquals("password", mapped.get("queen.io/schema-owner-password-key"));
    }

    @Test
    void theHeapFollowsItsShare() throws IOException {
        Container broker = brokerContainer(RenderedChart.withValues(
                "broker:\n  heap:\n    percentOfLimit: 60\n").brokerStatefulSet());
        assertEquals("-XX:MaxRAMPercentage=60.0 -XX:MinRAMPercentage=60.0", envValue(broker, "JDK_JAVA_OPTIONS"));
    }

    @Test
    void withoutAMemoryLimitTheImageDefaultsApply() throws IOException {
        // No limit: a share of it would be a share of the node, and pre-touching that is never wanted.
        Container broker = brokerContainer(RenderedChart.withValues(
                "broker:\n  resources:\n    limits: null\n").brokerStatefulSet());
        assertTrue(env(broker, "JDK_JAVA_OPTIONS").isEmpty());
    }

    @Test
    void jvmOptionsInBrokerEnvReplaceTheHeapFlags() throws IOException {
        Container broker = brokerContainer(RenderedChart.withValues(
                "broker:\n  env:\n    JDK_JAVA_OPTIONS: \"-Xmx512m\"\n").brokerStatefulSet());
        assertEquals(List.of("-Xmx512m"), broker.getEnv().stream()
                .filter(e -> "JDK_JAVA_OPTIONS".equals(e.getName())).map(EnvVar::getValue).toList());
    }

    static Container brokerContainer(StatefulSet sts) {
        return sts.getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> "broker".equals(c.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no container named broker"));
    }

    static Optional<EnvVar> env(Container container, String name) {
        return container.getEnv().stream().filter(e -> name.equals(e.getName())).findFirst();
    }

    static String envValue(Container container, String name) {
        return env(container, name).map(EnvVar::getValue).orElseThrow(() -> new AssertionError(name + " is not set"));
    }

    /** Every Secret a pod could read: env, envFrom, volumes (plain and projected). */
    static Set<String> secretsReferencedBy(PodSpec pod) {
        Set<String> secrets = new HashSet<>();
        List<Container> containers = new java.util.ArrayList<>(pod.getContainers());
        if (pod.getInitContainers() != null) {
            containers.addAll(pod.getInitContainers());
        }
        for (Container c : containers) {
            if (c.getEnv() != null) {
                c.getEnv().stream().filter(e -> e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null)
                        .forEach(e -> secrets.add(e.getValueFrom().getSecretKeyRef().getName()));
            }
            if (c.getEnvFrom() != null) {
                c.getEnvFrom().stream().filter(e -> e.getSecretRef() != null).forEach(e -> secrets.add(e.getSecretRef().getName()));
            }
        }
        if (pod.getVolumes() != null) {
            for (Volume v : pod.getVolumes()) {
                if (v.getSecret() != null) {
                    secrets.add(v.getSecret().getSecretName());
                }
                if (v.getProjected() != null) {
                    v.getProjected().getSources().stream().filter(s -> s.getSecret() != null)
                            .forEach(s -> secrets.add(s.getSecret().getName()));
                }
            }
        }
        return secrets;
    }
}
