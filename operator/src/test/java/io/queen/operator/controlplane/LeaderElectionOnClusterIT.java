package io.queen.operator.controlplane;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two operator replicas with the chart's leader-election RBAC on the real API server: the leader
 * keeps renewing its Lease, the standby stays a standby, and takes over once the leader stops.
 */
@ExtendWith(RealControlPlane.class)
class LeaderElectionOnClusterIT {
    private static final String RELEASE_NS = "queen-leader";
    /** JOSDK's default lease duration (the chart does not change it). */
    private static final Duration LEASE_DURATION = Duration.ofSeconds(15);

    private static ControlPlane plane;
    private static KubernetesClient admin;
    private static ChartRelease release;

    @BeforeAll
    static void install(ControlPlane controlPlane) throws Exception {
        plane = controlPlane;
        admin = plane.adminClient(RELEASE_NS);
        release = ChartRelease.render(plane, RELEASE_NS, "broker:\n  replicas: 1\n");
        release.install(admin);
    }

    @AfterAll
    static void close() {
        if (admin != null) {
            admin.close();
        }
    }

    @Test
    void theLeaderKeepsItsLeaseAndTheStandbyTakesOverWhenItStops() {
        String leaseName = release.operatorEnvironment(Map.of()).get("LEADER_ELECTION_LEASE_NAME");
        // No broker is needed to lead: the broker URL points nowhere.
        URI nowhere = URI.create("http://127.0.0.1:9");
        OperatorOnCluster first = OperatorOnCluster.start(plane, release, nowhere,
                Map.of("LEADER_ELECTION_IDENTITY", "replica-a", "ROLLOUT_ENABLED", "false"));
        OperatorOnCluster second = null;
        try {
            await().atMost(LEASE_DURATION).until(() -> holder(leaseName).equals("replica-a"));
            second = OperatorOnCluster.start(plane, release, nowhere,
                    Map.of("LEADER_ELECTION_IDENTITY", "replica-b", "ROLLOUT_ENABLED", "false"));

            // Renewals come every retry period (2 s): see three of them, all by replica-a.
            Set<String> renewals = new HashSet<>();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                Lease lease = lease(leaseName);
                assertEquals("replica-a", lease.getSpec().getHolderIdentity(), "the leader lost its Lease");
                renewals.add(lease.getSpec().getRenewTime().toString());
                return renewals.size() >= 4;
            });
            assertFalse(first.lostLeadership(), "the leader never lost its Lease");
            assertTrue(first.operator().leading());
            assertFalse(second.operator().leading(), "the standby does not lead");
            assertEquals(1.0, first.leaderGauge(), "the leader says on /metrics that it does the work");
            assertEquals(0.0, second.leaderGauge(), "the standby does not say it does the work");
            assertTrue(second.operator().ready(), "a standby is ready to take over");

            first.close();
            OperatorOnCluster standby = second;
            await().atMost(LEASE_DURATION.plusSeconds(5)).until(() -> standby.operator().leading()
                    && holder(leaseName).equals("replica-b"));
        } finally {
            first.close();
            if (second != null) {
                second.close();
            }
        }
    }

    private static Lease lease(String name) {
        return admin.leases().inNamespace(RELEASE_NS).withName(name).get();
    }

    private static String holder(String name) {
        Lease lease = lease(name);
        return lease == null || lease.getSpec() == null || lease.getSpec().getHolderIdentity() == null ? ""
                : lease.getSpec().getHolderIdentity();
    }
}
