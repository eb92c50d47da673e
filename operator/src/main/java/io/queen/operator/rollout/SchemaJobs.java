package io.queen.operator.rollout;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The privileged schema Job of a broker StatefulSet, built from its pod template (pure).
 *
 * <p>Brokers run with {@code QUEEN_APPLY_SCHEMA=0} under a runtime database role. The Job runs the
 * template's (new) broker image with the {@code apply-schema} command: same env and envFrom as the
 * broker, minus the database user and password (and the encryption key, the JWT settings and the
 * listener TLS files it never needs), plus
 * {@code PG_USER}/{@code PG_PASSWORD} from the owner credentials Secret named by the StatefulSet
 * annotation {@value #OWNER_SECRET_ANNOTATION}, under the keys the two key annotations name; only
 * the Job reads that Secret.
 */
public final class SchemaJobs {
    public static final String BROKER_CONTAINER = "broker";
    public static final String OWNER_SECRET_ANNOTATION = "queen.io/schema-owner-secret";
    /** The owner Secret's key holding the user name (default {@code PG_USER}). */
    public static final String OWNER_USER_KEY_ANNOTATION = "queen.io/schema-owner-user-key";
    /** The owner Secret's key holding the password (default {@code PG_PASSWORD}). */
    public static final String OWNER_PASSWORD_KEY_ANNOTATION = "queen.io/schema-owner-password-key";
    public static final String SCHEMA_KEY_LABEL = "queen.io/schema-key-hash";

    private static final int MAX_NAME = 63;
    private static final String COMPONENT_LABEL = "app.kubernetes.io/component";
    /** The broker's runtime credentials (the owner Secret replaces them), the key it never needs, and the switch it sets itself. */
    private static final Set<String> NOT_FOR_THE_JOB = Set.of("PG_USER", "PG_PASSWORD", "QUEEN_ENCRYPTION_KEY",
            "QUEEN_APPLY_SCHEMA");

    private SchemaJobs() {
    }

    /** The broker container's image: the schema a template needs is the one its image ships. */
    public static Optional<String> schemaKey(StatefulSet sts) {
        return brokerContainer(sts.getSpec().getTemplate().getSpec()).map(Container::getImage);
    }

    /**
     * {@code <statefulset>-schema-<hash>}, at most 63 characters: the Job controller copies the name
     * into the {@code job-name} label of its pods, and a label value may not be longer. The
     * StatefulSet part is cut to fit (a StatefulSet name may itself have 63).
     */
    public static String jobName(String statefulSet, String schemaKey) {
        String suffix = "-schema-" + shortHash(schemaKey);
        if (statefulSet.length() + suffix.length() <= MAX_NAME) {
            return statefulSet + suffix;
        }
        // Cut: the hash then covers the whole name too, so two StatefulSets that share the kept
        // prefix never share a Job.
        suffix = "-schema-" + shortHash(statefulSet + "/" + schemaKey);
        return statefulSet.substring(0, MAX_NAME - suffix.length()).replaceAll("[-.]+$", "") + suffix;
    }

    public static Job build(StatefulSet sts, String schemaKey) {
        PodSpec template = sts.getSpec().getTemplate().getSpec();
        Container broker = brokerContainer(template).orElseThrow(
                () -> new IllegalStateException("StatefulSet " + sts.getMetadata().getName() + " has no container"));
        List<EnvVar> env = new ArrayList<>();
        if (broker.getEnv() != null) {
            // JWT_* and QUEEN_TLS_*: the Job serves no request, so it needs neither authentication nor a
            // listener certificate, never holds the broker's keys, and does not mount their Secrets.
            broker.getEnv().stream().filter(v -> !NOT_FOR_THE_JOB.contains(v.getName()) && !v.getName().startsWith("JWT_")
                    && !v.getName().startsWith("QUEEN_TLS_")).forEach(env::add);
        }
        env.add(new EnvVarBuilder().withName("QUEEN_APPLY_SCHEMA").withValue("1").build());
        var envFrom = new ArrayList<>(broker.getEnvFrom() == null ? List.of() : broker.getEnvFrom());
        Map<String, String> annotations = sts.getMetadata().getAnnotations() == null ? Map.of() : sts.getMetadata().getAnnotations();
        String ownerSecret = annotations.get(OWNER_SECRET_ANNOTATION);
        if (ownerSecret != null && !ownerSecret.isBlank()) {
            // Key by key, not envFrom: Secrets made by database operators name their keys username/password.
            env.add(secretKey("PG_USER", ownerSecret, annotations.getOrDefault(OWNER_USER_KEY_ANNOTATION, "PG_USER")));
            env.add(secretKey("PG_PASSWORD", ownerSecret, annotations.getOrDefault(OWNER_PASSWORD_KEY_ANNOTATION, "PG_PASSWORD")));
        }
        Container container = new ContainerBuilder()
                .withName("schema")
                .withImage(schemaKey)
                .withImagePullPolicy(broker.getImagePullPolicy())
                .withCommand(broker.getCommand())
                .withArgs("apply-schema")
                .withEnv(env)
                .withEnvFrom(envFrom)
                .withSecurityContext(broker.getSecurityContext())
                .withResources(broker.getResources())
                // The broker image runs with a read-only root filesystem; the JVM still wants a /tmp.
                .addNewVolumeMount().withName("tmp").withMountPath("/tmp").endVolumeMount()
                .build();
        String name = jobName(sts.getMetadata().getName(), schemaKey);
        return new JobBuilder()
                .withNewMetadata()
                    .withName(name)
                    .withNamespace(sts.getMetadata().getNamespace())
                    .addToLabels("app.kubernetes.io/part-of", "queen")
                    .addToLabels("app.kubernetes.io/component", "schema")
                    .addToLabels(SCHEMA_KEY_LABEL, shortHash(schemaKey))
                    .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("StatefulSet")
                            .withName(sts.getMetadata().getName()).withUid(sts.getMetadata().getUid()).build())
                .endMetadata()
                .withNewSpec()
                    // The applier may wait up to 10 minutes for its advisory lock, plus lock-timeout retries.
                    .withBackoffLimit(2)
                    .withActiveDeadlineSeconds(900L)
                    .withTtlSecondsAfterFinished(86_400)
                    .withNewTemplate()
                        .withNewMetadata().withLabels(podLabels(sts)).endMetadata()
                        .withNewSpec()
                            .withRestartPolicy("Never")
                            .withServiceAccountName(template.getServiceAccountName())
                            .withImagePullSecrets(template.getImagePullSecrets())
                            .withSecurityContext(template.getSecurityContext())
                            // Where the brokers may run, the Job may too (dedicated nodes, taints, priority).
                            .withNodeSelector(template.getNodeSelector())
                            .withTolerations(template.getTolerations())
                            .withAffinity(template.getAffinity())
                            .withPriorityClassName(template.getPriorityClassName())
                            // The applier never calls the Kubernetes API; neither do the brokers.
                            .withAutomountServiceAccountToken(template.getAutomountServiceAccountToken())
                            .addNewVolume().withName("tmp").withNewEmptyDir().withSizeLimit(new Quantity("64Mi"))
                                .endEmptyDir().endVolume()
                            .withContainers(container)
                        .endSpec()
                    .endTemplate()
                .endSpec()
                .build();
    }

    /**
     * The broker pods' labels (NetworkPolicies that let brokers reach PostgreSQL select on them), with
     * {@code component: schema}, without the StatefulSet controller's own labels, and never matching
     * the StatefulSet's selector: the broker Service must not route to the Job's pod.
     */
    static Map<String, String> podLabels(StatefulSet sts) {
        var template = sts.getSpec().getTemplate().getMetadata();
        Map<String, String> labels = new LinkedHashMap<>(template == null || template.getLabels() == null
                ? Map.of() : template.getLabels());
        labels.keySet().removeAll(Set.of("controller-revision-hash", "statefulset.kubernetes.io/pod-name",
                "apps.kubernetes.io/pod-index"));
        labels.put("app.kubernetes.io/part-of", "queen");
        labels.put(COMPONENT_LABEL, "schema");
        Map<String, String> selector = sts.getSpec().getSelector() == null || sts.getSpec().getSelector().getMatchLabels() == null
                ? Map.of() : sts.getSpec().getSelector().getMatchLabels();
        if (!selector.isEmpty() && labels.entrySet().containsAll(selector.entrySet())) {
            selector.keySet().forEach(labels::remove);
        }
        return labels;
    }

    private static EnvVar secretKey(String variable, String secret, String key) {
        return new EnvVarBuilder().withName(variable).withNewValueFrom().withNewSecretKeyRef().withName(secret).withKey(key)
                .endSecretKeyRef().endValueFrom().build();
    }

    private static Optional<Container> brokerContainer(PodSpec template) {
        if (template == null || template.getContainers() == null || template.getContainers().isEmpty()) {
            return Optional.empty();
        }
        return template.getContainers().stream().filter(c -> BROKER_CONTAINER.equals(c.getName())).findFirst()
                .or(() -> Optional.of(template.getContainers().get(0)));
    }

    private static String shortHash(String value) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 5);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
