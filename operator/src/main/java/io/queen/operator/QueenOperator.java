package io.queen.operator;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.javaoperatorsdk.operator.processing.retry.GenericRetry;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.queen.operator.brokerclient.BrokerClient;
import io.queen.operator.brokerclient.BrokerCredentials;
import io.queen.operator.crd.Queue;
import io.queen.operator.crd.Tenant;
import io.queen.operator.reconcile.QueueReconciler;
import io.queen.operator.reconcile.ReconcileTriggers;
import io.queen.operator.reconcile.StatusWriter;
import io.queen.operator.reconcile.TenantReconciler;
import io.queen.operator.rollout.BrokerRolloutReconciler;
import io.queen.operator.rollout.RolloutActions;
import io.queen.operator.rollout.RolloutExecutor;
import io.queen.operator.rollout.RolloutObserver;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The operator wired from its settings: the Queue, Tenant and broker-rollout controllers on one
 * JOSDK {@link Operator}. Main and the integration tests build it the same way; only the client,
 * the settings and the clock differ.
 */
public final class QueenOperator implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(QueenOperator.class);

    private final Operator operator;
    private final AtomicBoolean leading;
    private final AtomicBoolean closing;
    private final boolean leaderElection;

    private QueenOperator(Operator operator, AtomicBoolean leading, AtomicBoolean closing, boolean leaderElection) {
        this.operator = operator;
        this.leading = leading;
        this.closing = closing;
        this.leaderElection = leaderElection;
    }

    /**
     * Registers every controller; {@link #start()} begins reconciling (once leader, with leader
     * election). {@code onLeadershipLost} runs when this replica loses its Lease while not being
     * closed: its controllers must stop at once (another replica leads now), and Main exits the
     * process so that Kubernetes restarts it as a standby.
     */
    public static QueenOperator create(KubernetesClient client, OperatorSettings settings, MeterRegistry metrics, Clock clock,
                                       Runnable onLeadershipLost) {
        AtomicBoolean leading = new AtomicBoolean(!settings.leaderElection());
        AtomicBoolean closing = new AtomicBoolean();
        Operator operator = new Operator(o -> {
            o.withKubernetesClient(client)
                    .withCloseClientOnStop(false)
                    .withMetrics(MicrometerMetrics.withoutPerResourceMetrics(metrics))
                    // The fabric8 mock API server answers 415/404 to server-side apply: tests switch it off.
                    .withUseSSAToPatchPrimaryResource(settings.useSsa())
                    .withSSABasedCreateUpdateMatchForDependentResources(settings.useSsa());
            if (settings.leaderElection()) {
                o.withLeaderElectionConfiguration(new LeaderElectionConfiguration(settings.leaseName(),
                        settings.leaseNamespace(), LeaderElectionConfiguration.LEASE_DURATION_DEFAULT_VALUE,
                        LeaderElectionConfiguration.RENEW_DEADLINE_DEFAULT_VALUE,
                        LeaderElectionConfiguration.RETRY_PERIOD_DEFAULT_VALUE, settings.leaseIdentity(),
                        new LeaderCallbacks(() -> leading.set(true), () -> {
                            leading.set(false);
                            if (!closing.get()) {
                                onLeadershipLost.run();
                            }
                        }, leader -> { }),
                        // Not JOSDK's own exit: it also fires when the operator is stopped, and
                        // System.exit inside the shutdown hook that stops it would hang the JVM.
                        false));
            }
        });
        // Which replica does the work: 1 on the leader (or without leader election), 0 on a standby.
        Gauge.builder("queen.operator.leader", leading, l -> l.get() ? 1 : 0)
                .description("1 while this replica holds the leader Lease and reconciles").register(metrics);
        BrokerClient broker = new BrokerClient(settings.brokerUrl(), settings.brokerTimeout(), credentials(settings, clock),
                settings.brokerCaFile());
        EventRecorder events = new EventRecorder(client, clock);
        StatusWriter statusWriter = new StatusWriter(client);
        // Retries for transient broker errors: quick at first, then backing off; after the last
        // one the periodic resync takes over.
        GenericRetry retry = new GenericRetry().setInitialInterval(Duration.ofSeconds(2)).setIntervalMultiplier(2)
                .setMaxInterval(Duration.ofMinutes(1).toMillis()).setMaxAttempts(8);

        operator.register(new QueueReconciler(broker, events, statusWriter, settings.timings(), clock),
                (ControllerConfigurationOverrider<Queue> c) -> {
                    watch(c, settings);
                    c.withOnUpdateFilter(ReconcileTriggers.specOrAnnotationChange())
                            .withReconciliationMaxInterval(settings.timings().resync())
                            .withRetry(retry);
                });
        operator.register(new TenantReconciler(broker, events, statusWriter, settings.timings(), clock),
                (ControllerConfigurationOverrider<Tenant> c) -> {
                    watch(c, settings);
                    c.withOnUpdateFilter(ReconcileTriggers.specOrAnnotationChange())
                            .withReconciliationMaxInterval(settings.timings().resync())
                            .withRetry(retry);
                });
        if (settings.rolloutEnabled()) {
            RolloutExecutor executor = new RolloutExecutor(new RolloutObserver(client, clock),
                    new RolloutActions(client, events, clock, settings.evictPods()), settings.rolloutReadyTimeout());
            operator.register(new BrokerRolloutReconciler(executor, settings.rolloutPoll(),
                    settings.rolloutPoll().multipliedBy(6)), c -> {
                        if (settings.rolloutNamespace() != null) {
                            // Brokers live in the release namespace: rollout rights are granted there only.
                            c.settingNamespaces(Set.of(settings.rolloutNamespace()));
                        } else {
                            watch(c, settings);
                        }
                    });
        }
        return new QueenOperator(operator, leading, closing, settings.leaderElection());
    }

    /** The broker credentials, with one line at start on how they travel (never the token itself). */
    private static BrokerCredentials credentials(OperatorSettings settings, Clock clock) {
        BrokerCredentials credentials = BrokerCredentials.from(settings.credentials(), settings.brokerUrl(), clock);
        if (credentials != BrokerCredentials.NONE && BrokerCredentials.sentInClear(settings.brokerUrl())) {
            if (settings.credentials().allowInsecure()) {
                LOG.warn("broker credentials ({}) go in clear text to {} (QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS=true)",
                        credentials.describe(), settings.brokerUrl().getHost());
            } else {
                LOG.error("QUEEN_BROKER_URL {} is plain HTTP to a non-loopback host: the operator will not send its"
                        + " credentials, and every Queue and Tenant shows Ready=False InsecureCredentialsRefused until"
                        + " the URL is https or QUEEN_OPERATOR_ALLOW_INSECURE_CREDENTIALS=true", settings.brokerUrl());
            }
        } else {
            LOG.info("broker credentials: {}", credentials.describe());
        }
        if ("https".equals(settings.brokerUrl().getScheme())) {
            LOG.info("broker certificate checked against {} and the host name {}", settings.brokerCaFile() == null
                    ? "the JDK's default trust store" : "the CA certificates in " + settings.brokerCaFile(),
                    settings.brokerUrl().getHost());
        }
        return credentials;
    }

    private static void watch(ControllerConfigurationOverrider<?> c, OperatorSettings settings) {
        if (settings.watchNamespaces().isEmpty()) {
            c.watchingAllNamespaces();
        } else {
            c.settingNamespaces(settings.watchNamespaces());
        }
    }

    public void start() {
        operator.start();
    }

    /** The process is up and the operator was started (a standby replica counts as alive). */
    public boolean alive() {
        return operator.getRuntimeInfo().isStarted();
    }

    /** This replica holds the Lease (always true without leader election). */
    public boolean leading() {
        return leading.get();
    }

    /** Started, and, on the leader, every informer is healthy; a standby replica is ready to take over. */
    public boolean ready() {
        if (!alive()) {
            return false;
        }
        return (leaderElection && !leading.get()) || operator.getRuntimeInfo().allEventSourcesAreHealthy();
    }

    public Operator operator() {
        return operator;
    }

    @Override
    public void close() {
        closing.set(true);
        operator.stop();
    }
}
