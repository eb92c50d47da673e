package io.queen.charts;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContext;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every pod of the release runs as a non-root numeric user with a read-only root filesystem, no
 * privilege escalation and no capabilities. The operator copies the broker's contexts into the
 * schema Job (SchemaJobs.build), so the Job is covered by the broker's.
 */
class PodSecurityTest {

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void everyPodRunsNonRootWithAReadOnlyRootFilesystem(ValueSet valueSet) {
        RenderedChart chart = RenderedChart.of(valueSet);
        Map<String, PodSpec> pods = Map.of(
                "broker StatefulSet", chart.brokerStatefulSet().getSpec().getTemplate().getSpec(),
                "operator Deployment", chart.operatorDeployment().getSpec().getTemplate().getSpec());
        pods.forEach((owner, pod) -> {
            PodSecurityContext podContext = pod.getSecurityContext();
            assertTrue(podContext.getRunAsNonRoot(), owner + ": runAsNonRoot");
            assertTrue(podContext.getRunAsUser() != null && podContext.getRunAsUser() > 0, owner + ": numeric non-root uid");
            assertEquals("RuntimeDefault", podContext.getSeccompProfile().getType(), owner + ": seccomp");
            for (Container container : pod.getContainers()) {
                SecurityContext context = container.getSecurityContext();
                String where = owner + "/" + container.getName();
                assertTrue(context.getReadOnlyRootFilesystem(), where + ": readOnlyRootFilesystem");
                assertEquals(Boolean.FALSE, context.getAllowPrivilegeEscalation(), where + ": allowPrivilegeEscalation");
                assertTrue(context.getCapabilities().getDrop().contains("ALL"), where + ": drops all capabilities");
                assertTrue(container.getVolumeMounts().stream().anyMatch(m -> "/tmp".equals(m.getMountPath())),
                        where + ": a writable /tmp");
            }
        });
    }
}
