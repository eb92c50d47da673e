package io.queen.operator.rollout;

import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SchemaJobsTest {
    @Test
    void aJobNameFitsALabelValueEvenForTheLongestStatefulSetName() {
        String longest = "b".repeat(62) + "x";
        String name = SchemaJobs.jobName(longest, "queen-broker:1.5.3");
        assertTrue(name.length() <= 63, name + " has " + name.length() + " characters");
        assertTrue(name.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?"), name);
        assertEquals(name, SchemaJobs.jobName(longest, "queen-broker:1.5.3"), "deterministic");
        assertNotEquals(name, SchemaJobs.jobName(longest, "queen-broker:1.5.4"), "one Job per image");
    }

    @Test
    void twoLongNamesWithTheSamePrefixGetTwoJobs() {
        String prefix = "p".repeat(50);
        assertNotEquals(SchemaJobs.jobName(prefix + "-east", "img"), SchemaJobs.jobName(prefix + "-west", "img"));
    }

    @Test
    void aCutNeverEndsOnADash() {
        String name = SchemaJobs.jobName("a".repeat(44) + "-rest-of-the-name", "img");
        assertTrue(!name.contains("--"), name);
    }

    @Test
    void aShortNameIsKept() {
        assertTrue(SchemaJobs.jobName("queen-broker", "img").startsWith("queen-broker-schema-"));
    }

    @Test
    void theJobRunsWhereTheBrokersRunWithAWritableTmpAndWithoutTheEncryptionKey() {
        StatefulSet sts = new StatefulSetBuilder().withNewMetadata().withName("queen-broker").withNamespace("q").withUid("u")
                .endMetadata().withNewSpec().withNewTemplate().withNewSpec()
                .addToNodeSelector("pool", "brokers").addNewToleration().withKey("dedicated").withValue("queen")
                .withEffect("NoSchedule").endToleration().withPriorityClassName("queen-high")
                .addNewContainer().withName("broker").withImage("queen-broker:2")
                .addNewEnv().withName("QUEEN_ENCRYPTION_KEY").withValue("00").endEnv()
                .addNewEnv().withName("JWT_ENABLED").withValue("true").endEnv()
                .addNewEnv().withName("JWT_SECRET").withValue("s".repeat(32)).endEnv()
                .addNewEnv().withName("QUEEN_TLS_CERT_FILE").withValue("/etc/queen/tls/tls.crt").endEnv()
                .addNewEnv().withName("QUEEN_TLS_KEY_FILE").withValue("/etc/queen/tls/tls.key").endEnv()
                .addNewEnv().withName("PG_USER").withValue("runtime").endEnv()
                .addNewEnv().withName("PG_HOST").withValue("db").endEnv().endContainer()
                .endSpec().endTemplate().endSpec().build();
        PodSpec pod = SchemaJobs.build(sts, "queen-broker:2").getSpec().getTemplate().getSpec();
        assertEquals("brokers", pod.getNodeSelector().get("pool"));
        assertEquals("dedicated", pod.getTolerations().getFirst().getKey());
        assertEquals("queen-high", pod.getPriorityClassName());
        assertTrue(pod.getContainers().getFirst().getVolumeMounts().stream().anyMatch(m -> "/tmp".equals(m.getMountPath())));
        assertTrue(pod.getVolumes().stream().anyMatch(v -> v.getEmptyDir() != null));
        var names = pod.getContainers().getFirst().getEnv().stream().map(e -> e.getName()).toList();
        assertTrue(names.contains("PG_HOST"), names.toString());
        assertTrue(!names.contains("QUEEN_ENCRYPTION_KEY") && !names.contains("PG_USER"), names.toString());
        assertTrue(!names.contains("JWT_ENABLED") && !names.contains("JWT_SECRET"),
                "the Job serves nothing: no authentication, no key: " + names);
        assertTrue(names.stream().noneMatch(n -> n.startsWith("QUEEN_TLS_")),
                "no listener certificate either: the Job does not mount its Secret: " + names);
    }

    @Test
    void theOwnerSecretIsReadKeyByKeyUnderTheKeysTheAnnotationsName() {
        StatefulSet sts = new StatefulSetBuilder().withNewMetadata().withName("queen-broker").withNamespace("q").withUid("u")
                .addToAnnotations(SchemaJobs.OWNER_SECRET_ANNOTATION, "pg-owner")
                .addToAnnotations(SchemaJobs.OWNER_USER_KEY_ANNOTATION, "username")
                .addToAnnotations(SchemaJobs.OWNER_PASSWORD_KEY_ANNOTATION, "password")
                .endMetadata().withNewSpec().withNewTemplate().withNewSpec()
                .addNewContainer().withName("broker").withImage("queen-broker:2").endContainer()
                .endSpec().endTemplate().endSpec().build();
        var container = SchemaJobs.build(sts, "queen-broker:2").getSpec().getTemplate().getSpec().getContainers().getFirst();
        assertTrue(container.getEnvFrom() == null || container.getEnvFrom().isEmpty(), "no envFrom of the owner Secret");
        var user = container.getEnv().stream().filter(e -> "PG_USER".equals(e.getName())).findFirst().orElseThrow();
        var password = container.getEnv().stream().filter(e -> "PG_PASSWORD".equals(e.getName())).findFirst().orElseThrow();
        assertEquals("pg-owner", user.getValueFrom().getSecretKeyRef().getName());
        assertEquals("username", user.getValueFrom().getSecretKeyRef().getKey());
        assertEquals("password", password.getValueFrom().getSecretKeyRef().getKey());
    }

    @Test
    void theJobPodCarriesTheBrokerLabelsButIsNeverSelectedAsABroker() {
        StatefulSet sts = new StatefulSetBuilder().withNewMetadata().withName("queen-broker").withNamespace("q").endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app.kubernetes.io/name", "queen")
                .addToMatchLabels("app.kubernetes.io/component", "broker").endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app.kubernetes.io/name", "queen")
                .addToLabels("app.kubernetes.io/component", "broker").addToLabels("team", "payments").endMetadata()
                .endTemplate().endSpec().build();
        var labels = SchemaJobs.podLabels(sts);
        assertEquals("payments", labels.get("team"), "NetworkPolicies keyed on broker labels still apply");
        assertEquals("schema", labels.get("app.kubernetes.io/component"));
        assertEquals("queen", labels.get("app.kubernetes.io/name"));

        StatefulSet bare = new StatefulSetBuilder().withNewMetadata().withName("b").endMetadata().withNewSpec()
                .withNewSelector().addToMatchLabels("app", "queen-broker").endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", "queen-broker").endMetadata().endTemplate().endSpec().build();
        assertTrue(!SchemaJobs.podLabels(bare).containsKey("app"), "a selector without component must not match the Job pod");
    }
}
