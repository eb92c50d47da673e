package io.queen.operator.controlplane;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import org.awaitility.core.ConditionTimeoutException;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

import static org.awaitility.Awaitility.await;

/**
 * A real Kubernetes control plane on loopback: etcd, kube-apiserver (RBAC, service-account token
 * signing, the default admission plugins) and kube-controller-manager with the controllers the
 * operator depends on. The binaries come from {@code bin/control-plane}, which builds them from
 * pinned Go modules (or reuses an earlier build). Nothing here runs containers: no kubelet, no
 * scheduler; {@link FakeKubelet} plays the node.
 *
 * <p>Started once per test JVM by {@link RealControlPlane}; every process is stopped at the end.
 * Logs are kept under {@code target/control-plane/} for a failed run.
 */
public final class ControlPlane implements AutoCloseable {
    /** The controllers the operator's scenarios need (the rest of the default set is left out). */
    static final List<String> CONTROLLERS = List.of("statefulset-controller", "job-controller",
            "garbage-collector-controller", "namespace-controller", "ttl-after-finished-controller", "ttl-controller",
            "serviceaccount-controller", "disruption-controller", "pod-garbage-collector-controller",
            "persistentvolumeclaim-protection-controller", "clusterrole-aggregation-controller");
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final Path workDir;
    private final URI apiServer;
    private final String adminToken;
    private final List<Process> processes;
    private final Duration startTime;
    private final String version;

    private ControlPlane(Path workDir, URI apiServer, String adminToken, List<Process> processes, Duration startTime,
                         String version) {
        this.workDir = workDir;
        this.apiServer = apiServer;
        this.adminToken = adminToken;
        this.processes = processes;
        this.startTime = startTime;
        this.version = version;
    }

    /** Builds (or reuses) the binaries, starts the three processes and waits until they serve. */
    public static ControlPlane start(Path repoRoot, Path workDir) throws IOException, InterruptedException {
        Path binaries = binaries(repoRoot, workDir);
        Files.createDirectories(workDir);
        Instant started = Instant.now();
        List<Process> processes = new ArrayList<>();
        try {
            int etcdClient = freePort();
            int etcdPeer = freePort();
            int apiPort = freePort();
            String token = HexFormat.of().formatHex(SecureRandom.getSeed(16));
            writeServiceAccountKeys(workDir);
            // A static token with system:masters: the admin identity that also impersonates the operator.
            Files.writeString(workDir.resolve("tokens.csv"), token + ",queen-test-admin,queen-test-admin,system:masters\n");

            processes.add(launch(workDir, "etcd", List.of(binaries.resolve("etcd").toString(),
                    "--name", "queen-test", "--data-dir", workDir.resolve("etcd-data").toString(),
                    "--listen-client-urls", "http://127.0.0.1:" + etcdClient,
                    "--advertise-client-urls", "http://127.0.0.1:" + etcdClient,
                    "--listen-peer-urls", "http://127.0.0.1:" + etcdPeer,
                    "--initial-advertise-peer-urls", "http://127.0.0.1:" + etcdPeer,
                    "--initial-cluster", "queen-test=http://127.0.0.1:" + etcdPeer,
                    // A test cluster lives for one JVM: durability buys nothing and costs fsyncs.
                    "--unsafe-no-fsync", "--log-level", "warn")));

            processes.add(launch(workDir, "kube-apiserver", List.of(binaries.resolve("kube-apiserver").toString(),
                    "--etcd-servers", "http://127.0.0.1:" + etcdClient,
                    "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
                    "--secure-port", Integer.toString(apiPort),
                    "--cert-dir", workDir.resolve("apiserver-certs").toString(),
                    "--token-auth-file", workDir.resolve("tokens.csv").toString(),
                    "--authorization-mode", "RBAC",
                    "--service-account-issuer", "https://kubernetes.default.svc",
                    "--service-account-key-file", workDir.resolve("sa.pub").toString(),
                    "--service-account-signing-key-file", workDir.resolve("sa.key").toString(),
                    "--service-cluster-ip-range", "10.96.0.0/16")));
            URI api = URI.create("https://127.0.0.1:" + apiPort);
            awaitHealthy(api, token, "/readyz", processes);

            Path kubeconfig = workDir.resolve("kubeconfig");
            Files.writeString(kubeconfig, kubeconfig(api, token));
            processes.add(launch(workDir, "kube-controller-manager", List.of(
                    binaries.resolve("kube-controller-manager").toString(),
                    "--kubeconfig", kubeconfig.toString(),
                    "--controllers", String.join(",", CONTROLLERS),
                    "--leader-elect=false", "--secure-port", "0",
                    // Short resyncs: the scenarios wait on these controllers.
                    "--concurrent-gc-syncs", "5", "--namespace-sync-period", "10s")));
            awaitControllerManager(api, token, workDir, processes);
            ControlPlane plane = new ControlPlane(workDir, api, token, processes, Duration.between(started, Instant.now()),
                    binaries.getFileName().toString());
            // Also when the test JVM dies without JUnit closing it: no etcd or API server outlives its tests.
            Runtime.getRuntime().addShutdownHook(new Thread(plane::close, "control-plane-stop"));
            return plane;
        } catch (IOException | RuntimeException e) {
            processes.forEach(ControlPlane::stop);
            throw e;
        }
    }

    public URI apiServer() {
        return apiServer;
    }

    /** Wall time from the first process started to the controller-manager at work. */
    public Duration startTime() {
        return startTime;
    }

    /** The Kubernetes release the binaries were built from (e.g. v1.34.4). */
    public String version() {
        return version;
    }

    public Path workDir() {
        return workDir;
    }

    /** A client with cluster-admin rights (the test itself). */
    public KubernetesClient adminClient(String namespace) {
        return new KubernetesClientBuilder().withConfig(config(namespace).build()).build();
    }

    /**
     * A client that acts as the ServiceAccount {@code namespace/name} through impersonation, with
     * the groups the API server gives a ServiceAccount token: its rights are exactly its RBAC.
     */
    public KubernetesClient clientAs(String namespace, String serviceAccount) {
        Config config = config(namespace)
                .withImpersonateUsername("system:serviceaccount:" + namespace + ":" + serviceAccount)
                .withImpersonateGroups("system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated")
                .build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    private ConfigBuilder config(String namespace) {
        return new ConfigBuilder(Config.empty()).withMasterUrl(apiServer.toString()).withOauthToken(adminToken)
                .withTrustCerts(true).withDisableHostnameVerification(true).withNamespace(namespace)
                .withRequestTimeout(30_000).withConnectionTimeout(10_000);
    }

    /** The controller-manager runs once its service-account controller made the default ServiceAccount. */
    private static void awaitControllerManager(URI api, String token, Path workDir, List<Process> processes) {
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl(api.toString()).withOauthToken(token)
                .withTrustCerts(true).withDisableHostnameVerification(true).build();
        try (KubernetesClient admin = new KubernetesClientBuilder().withConfig(config).build()) {
            pollUntil(processes, () -> admin.serviceAccounts().inNamespace("default").withName("default").get() != null,
                    () -> "kube-controller-manager did not create the default ServiceAccount within " + START_TIMEOUT
                            + "; see " + workDir.resolve("kube-controller-manager.log"));
        }
    }

    /**
     * Polls a starting process for a condition: every 200 ms (from at once), until it holds or
     * {@link #START_TIMEOUT} is up. A process that exits ends the wait at once, with its exit code;
     * a timeout throws {@code timeoutMessage}.
     */
    private static void pollUntil(List<Process> processes, Callable<Boolean> condition, Supplier<String> timeoutMessage) {
        try {
            await().atMost(START_TIMEOUT).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(200)).pollInSameThread()
                    .until(() -> {
                        checkAlive(processes);
                        return condition.call();
                    });
        } catch (ConditionTimeoutException e) {
            throw new IllegalStateException(timeoutMessage.get(), e);
        }
    }

    @Override
    public void close() {
        // Reverse order: the controller-manager and API server before etcd.
        for (int i = processes.size() - 1; i >= 0; i--) {
            stop(processes.get(i));
        }
    }

    private static void stop(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Runs bin/control-plane; its last line of output is the folder of the binaries. */
    private static Path binaries(Path repoRoot, Path workDir) throws IOException, InterruptedException {
        Files.createDirectories(workDir);
        Path log = workDir.resolve("build.log");
        Process build = new ProcessBuilder(repoRoot.resolve("bin/control-plane").toString())
                .redirectError(log.toFile()).redirectOutput(ProcessBuilder.Redirect.PIPE).start();
        String out = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (build.waitFor() != 0 || out.isEmpty()) {
            throw new IllegalStateException("bin/control-plane failed (exit " + build.exitValue() + "): "
                    + Files.readString(log));
        }
        String[] lines = out.split("\n");
        return Path.of(lines[lines.length - 1].trim());
    }

    private static Process launch(Path workDir, String name, List<String> command) throws IOException {
        Path log = workDir.resolve(name + ".log");
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static void awaitHealthy(URI api, String token, String path, List<Process> processes) {
        HttpClient http = HttpClient.newBuilder().sslContext(trustAll()).connectTimeout(Duration.ofSeconds(2)).build();
        AtomicReference<String> last = new AtomicReference<>("no answer");
        pollUntil(processes, () -> {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(api.resolve(path)).header("Authorization", "Bearer " + token)
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                last.set(r.statusCode() + " " + r.body());
                return r.statusCode() == 200;
            } catch (IOException e) {
                last.set(e.toString());
                return false;
            }
        }, () -> "kube-apiserver not ready within " + START_TIMEOUT + ": " + last.get());
    }

    private static void checkAlive(List<Process> processes) {
        for (Process p : processes) {
            if (!p.isAlive()) {
                throw new IllegalStateException(p.info().command().orElse("a control-plane process") + " exited with "
                        + p.exitValue() + " (its log is in target/control-plane/)");
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** The key pair the API server signs and checks ServiceAccount tokens with. */
    private static void writeServiceAccountKeys(Path dir) throws IOException {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            KeyPair pair = generator.generateKeyPair();
            Files.writeString(dir.resolve("sa.key"), pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
            Files.writeString(dir.resolve("sa.pub"), pem("PUBLIC KEY", pair.getPublic().getEncoded()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    private static String kubeconfig(URI api, String token) {
        return """
                apiVersion: v1
                kind: Config
                clusters: [{name: test, cluster: {server: "%s", insecure-skip-tls-verify: true}}]
                users: [{name: admin, user: {token: "%s"}}]
                contexts: [{name: test, context: {cluster: test, user: admin}}]
                current-context: test
                """.formatted(api, token);
    }

    /** The API server's serving certificate is self-signed and made at its start: trust it (loopback only). */
    private static SSLContext trustAll() {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, new TrustManager[] {new X509TrustManager() {
                @Override
                public void checkClientTrusted(X509Certificate[] chain, String authType) {
                }

                @Override
                public void checkServerTrusted(X509Certificate[] chain, String authType) {
                }

                @Override
                public X509Certificate[] getAcceptedIssuers() {
                    return new X509Certificate[0];
                }
            }}, null);
            return context;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
