package io.queen.charts;

import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleRef;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The operator's RBAC grants exactly the API calls the operator makes: every call in
 * {@link #CALLS_IN_WATCHED_NAMESPACES} in every watched namespace (all of them in Cluster scope),
 * the Lease calls in the release namespace only, and nothing else. The tables are read off
 * operator/src (and JOSDK 5.2.3, which makes the framework's own calls); change them with the code.
 */
class OperatorRbacTest {
    /** One API group, resource (or resource/subresource) and verb. */
    record ApiCall(String group, String resource, String verb) {
        @Override
        public String toString() {
            return (group.isEmpty() ? "core" : group) + "/" + resource + ":" + verb;
        }
    }

    private static List<ApiCall> calls(String group, String resource, String... verbs) {
        return Arrays.stream(verbs).map(verb -> new ApiCall(group, resource, verb)).toList();
    }

    /** Calls made in each namespace the operator watches, and where in the code each one is made. */
    static final List<ApiCall> CALLS_IN_WATCHED_NAMESPACES = Stream.of(
            // Informer of the Queue controller (QueueReconciler, registered in QueenOperator.create).
            calls("queen.io", "queues", "list", "watch"),
            // Finalizers.match/afterCleanup (JOSDK PrimaryUpdateAndCacheUtils) add and remove the Queue finalizer
            // with a JSON patch and re-read the Queue on a conflict.
            calls("queen.io", "queues", "patch", "get"),
            // UpdateControl/ErrorStatusUpdateControl.patchStatus in QueueReconciler; StatusWriter.patchStatus in cleanup.
            calls("queen.io", "queues/status", "patch"),
            // Informers of the Tenant controller (TenantReconciler) and of QueueReconciler.prepareEventSources.
            calls("queen.io", "tenants", "list", "watch"),
            // The Tenant finalizer, as for Queues.
            calls("queen.io", "tenants", "patch", "get"),
            // UpdateControl.patchStatus in TenantReconciler; StatusWriter.patchStatus during the purge.
            calls("queen.io", "tenants/status", "patch"),
            // EventRecorder.record: core/v1 Events about Queues and Tenants.
            calls("", "events", "create"))
            .flatMap(List::stream).toList();

    /** Calls of the broker rollout, made in the release namespace only (ROLLOUT_NAMESPACE). */
    static final List<ApiCall> ROLLOUT_CALLS = Stream.of(
            // Informer of BrokerRolloutReconciler (label-selected broker StatefulSets).
            calls("apps", "statefulsets", "list", "watch"),
            // RolloutObserver reads the StatefulSet; RolloutActions patches it (a JSON merge patch)
            // writes the rollout annotations and the restart annotation of the pod template.
            calls("apps", "statefulsets", "get", "patch"),
            // Pod informer of BrokerRolloutReconciler.prepareEventSources; RolloutObserver lists the pods.
            calls("", "pods", "list", "watch"),
            // RolloutActions, RolloutStep.DeletePod: one broker pod at a time, evicted (the PDB applies).
            calls("", "pods/eviction", "create"),
            // Job informer of BrokerRolloutReconciler.prepareEventSources; RolloutObserver reads the schema Job.
            calls("batch", "jobs", "list", "watch", "get"),
            // RolloutActions, RolloutStep.RunSchemaJob (the Job SchemaJobs.build describes).
            calls("batch", "jobs", "create"),
            // EventRecorder.record: Events about the broker StatefulSet.
            calls("", "events", "create"))
            .flatMap(List::stream).toList();

    /**
     * Leader election, in the release namespace only: fabric8's LeaseLock reads and creates the Lease and
     * renews or takes it over with PATCH; JOSDK's checkLeaseAccess refuses to start without get, create
     * and update.
     */
    static final List<ApiCall> LEASE_CALLS = calls("coordination.k8s.io", "leases", "get", "create", "update", "patch");

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void everyCallTheOperatorMakesIsGrantedInEveryWatchedNamespace(ValueSet valueSet) {
        Rbac rbac = Rbac.of(RenderedChart.of(valueSet));
        for (String namespace : rbac.watchedNamespaces()) {
            for (ApiCall call : CALLS_IN_WATCHED_NAMESPACES) {
                assertTrue(rbac.allows(namespace, call, null), valueSet + ": " + call + " is not granted in " + namespace);
            }
        }
        for (ApiCall call : ROLLOUT_CALLS) {
            assertTrue(rbac.allows(RenderedChart.NAMESPACE, call, null), valueSet + ": " + call + " is not granted in "
                    + RenderedChart.NAMESPACE);
        }
        for (ApiCall call : LEASE_CALLS) {
            assertTrue(rbac.allows(RenderedChart.NAMESPACE, call, rbac.leaseName()), valueSet + ": " + call
                    + " on Lease " + rbac.leaseName() + " is not granted in " + RenderedChart.NAMESPACE);
        }
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void rolloutRightsExistOnlyInTheReleaseNamespace(ValueSet valueSet) {
        Rbac rbac = Rbac.of(RenderedChart.of(valueSet));
        Set<String> elsewhere = new HashSet<>(rbac.watchedNamespaces());
        elsewhere.add("some-application-namespace");
        elsewhere.remove(RenderedChart.NAMESPACE);
        for (String namespace : elsewhere) {
            for (ApiCall call : ROLLOUT_CALLS) {
                if (!"events".equals(call.resource())) {
                    assertFalse(rbac.allows(namespace, call, null), valueSet + ": " + call + " is granted in " + namespace);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void nothingIsGrantedThatTheOperatorDoesNotCall(ValueSet valueSet) {
        Rbac rbac = Rbac.of(RenderedChart.of(valueSet));
        Set<ApiCall> needed = new HashSet<>(CALLS_IN_WATCHED_NAMESPACES);
        needed.addAll(ROLLOUT_CALLS);
        needed.addAll(LEASE_CALLS);
        Set<String> extra = new TreeSet<>();
        for (PolicyRule rule : rbac.allRules()) {
            for (String value : concat(rule.getApiGroups(), rule.getResources(), rule.getVerbs())) {
                assertFalse(value.contains("*"), valueSet + ": wildcard in " + rule);
            }
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    for (String verb : rule.getVerbs()) {
                        ApiCall granted = new ApiCall(group, resource, verb);
                        if (!needed.contains(granted)) {
                            extra.add(granted.toString());
                        }
                    }
                }
            }
        }
        assertTrue(extra.isEmpty(), valueSet + ": granted but never called: " + extra);
    }

    @ParameterizedTest
    @EnumSource(ValueSet.class)
    void rolesExistOnlyInWatchedNamespacesAndLeasesOnlyInTheReleaseNamespace(ValueSet valueSet) {
        Rbac rbac = Rbac.of(RenderedChart.of(valueSet));
        if (rbac.clusterWide()) {
            assertEquals(Set.of(RenderedChart.NAMESPACE), rbac.roleNamespaces(), "only the rollout and Lease Roles are namespaced");
        } else {
            assertEquals(rbac.watchedNamespaces(), rbac.roleNamespaces());
        }
        for (String namespace : rbac.roleNamespaces()) {
            if (!namespace.equals(RenderedChart.NAMESPACE)) {
                assertFalse(rbac.allows(namespace, LEASE_CALLS.get(0), rbac.leaseName()), "a Lease grant in " + namespace);
            }
        }
    }

    /** The operator's RBAC as rendered, bound to the operator Deployment's ServiceAccount. */
    record Rbac(boolean clusterWide, Set<String> watchedNamespaces, String leaseName, List<PolicyRule> clusterRules,
                Map<String, List<PolicyRule>> namespaceRules) {

        static Rbac of(RenderedChart chart) {
            var pod = chart.operatorDeployment().getSpec().getTemplate().getSpec();
            Subject operator = new Subject(null, "ServiceAccount", pod.getServiceAccountName(), RenderedChart.NAMESPACE);
            var env = OperatorChartTest.operator(chart);
            String watch = OperatorChartTest.env(env, "WATCH_NAMESPACES");
            String leaseName = OperatorChartTest.env(env, "LEADER_ELECTION_LEASE_NAME");
            assertEquals(RenderedChart.NAMESPACE, OperatorChartTest.env(env, "LEADER_ELECTION_NAMESPACE"));

            List<PolicyRule> clusterRules = new ArrayList<>();
            for (ClusterRoleBinding binding : chart.all(ClusterRoleBinding.class)) {
                if (binding.getSubjects().contains(operator)) {
                    clusterRules.addAll(clusterRole(chart, binding.getRoleRef()).getRules());
                }
            }
            Map<String, List<PolicyRule>> namespaceRules = new HashMap<>();
            for (RoleBinding binding : chart.all(RoleBinding.class)) {
                if (binding.getSubjects().contains(operator)) {
                    String namespace = binding.getMetadata().getNamespace();
                    RoleRef ref = binding.getRoleRef();
                    List<PolicyRule> rules = "ClusterRole".equals(ref.getKind()) ? clusterRole(chart, ref).getRules()
                            : chart.all(Role.class).stream().filter(r -> r.getMetadata().getName().equals(ref.getName())
                                    && namespace.equals(r.getMetadata().getNamespace())).findFirst()
                            .orElseThrow(() -> new AssertionError("RoleBinding to a missing Role " + ref.getName())).getRules();
                    namespaceRules.computeIfAbsent(namespace, n -> new ArrayList<>()).addAll(rules);
                }
            }
            Set<String> watched = watch.isEmpty() ? namespaceRules.keySet() : Set.of(watch.split(","));
            return new Rbac(watch.isEmpty(), Set.copyOf(watched), leaseName, clusterRules, namespaceRules);
        }

        private static ClusterRole clusterRole(RenderedChart chart, RoleRef ref) {
            return chart.find(ClusterRole.class, ref.getName())
                    .orElseThrow(() -> new AssertionError("binding to a missing ClusterRole " + ref.getName()));
        }

        boolean allows(String namespace, ApiCall call, String resourceName) {
            return Stream.concat(clusterRules.stream(), namespaceRules.getOrDefault(namespace, List.of()).stream())
                    .anyMatch(rule -> rule.getApiGroups().contains(call.group()) && rule.getResources().contains(call.resource())
                            && rule.getVerbs().contains(call.verb())
                            && (rule.getResourceNames() == null || rule.getResourceNames().isEmpty()
                                || rule.getResourceNames().contains(resourceName)));
        }

        Set<String> roleNamespaces() {
            return namespaceRules.keySet();
        }

        List<PolicyRule> allRules() {
            List<PolicyRule> all = new ArrayList<>(clusterRules);
            namespaceRules.values().forEach(all::addAll);
            return all;
        }
    }

    @SafeVarargs
    private static List<String> concat(List<String>... lists) {
        return Arrays.stream(lists).filter(l -> l != null).flatMap(List::stream).toList();
    }
}
