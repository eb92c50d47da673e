package io.queen.operator.controlplane;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.operator.OperatorSettings;
import io.queen.operator.QueenOperator;

import java.net.URI;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The operator in the test JVM as the chart deploys it: the environment of the chart's operator
 * Deployment (server-side apply and leader election on, as in production), a client that is the
 * chart's operator ServiceAccount (impersonated, so only the chart's RBAC applies), and the
 * broker at {@code brokerUrl}. Only intervals are shortened, through the same variables a user
 * would set.
 */
public final class OperatorOnCluster implements AutoCloseable {
    private final KubernetesClient client;
    private final QueenOperator operator;
    private final OperatorSettings settings;
    private final AtomicBoolean lostLeadership;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final SimpleMeterRegistry metrics;

    private OperatorOnCluster(KubernetesClient client, QueenOperator operator, OperatorSettings settings,
                              AtomicBoolean lostLeadership, SimpleMeterRegistry metrics) {
        this.client = client;
        this.operator = operator;
        this.settings = settings;
        this.lostLeadership = lostLeadership;
        this.metrics = metrics;
    }

    /** What this replica's {@code queen_operator_leader} gauge reports on /metrics. */
    public double leaderGauge() {
        return metrics.get("queen.operator.leader").gauge().value();
    }

    /** Intervals short enough for tests (each a variable the chart or a user sets). */
    public static Map<String, String> fastIntervals() {
        Map<String, String> env = new HashMap<>();
        env.put("RESYNC_INTERVAL", "2s");
        env.put("RECHECK_INTERVAL", "500ms");
        env.put("PURGE_STEP_INTERVAL", "100ms");
        env.put("ROLL_POLL_INTERVAL", "500ms");
        env.put("OPERATOR_HTTP_PORT", "0");
        return env;
    }

    public static OperatorOnCluster start(ControlPlane plane, ChartRelease release, URI brokerUrl, Map<String, String> overrides) {
        Map<String, String> env = new HashMap<>(fastIntervals());
        env.put("QUEEN_BROKER_URL", brokerUrl.toString());
        env.putAll(overrides);
        OperatorSettings settings = OperatorSettings.from(release.operatorEnvironment(env));
        KubernetesClient client = plane.clientAs(release.namespace(), release.operatorServiceAccount());
        AtomicBoolean lost = new AtomicBoolean();
        AtomicReference<QueenOperator> started = new AtomicReference<>();
        // Where Main exits the process, the test records the loss and stops this replica's controllers.
        SimpleMeterRegistry metrics = new SimpleMeterRegistry();
        QueenOperator operator = QueenOperator.create(client, settings, metrics, Clock.systemUTC(), () -> {
            lost.set(true);
            new Thread(() -> started.get().close(), "lost-lease-stop").start();
        });
        started.set(operator);
        operator.start();
        return new OperatorOnCluster(client, operator, settings, lost, metrics);
    }

    public QueenOperator operator() {
        return operator;
    }

    /** Whether this replica lost a Lease it held (Main would have exited). */
    public boolean lostLeadership() {
        return lostLeadership.get();
    }

    public OperatorSettings settings() {
        return settings;
    }

    /** Stops this replica (as a pod being deleted would); closing twice is harmless. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        operator.close();
        client.close();
    }
}
