package io.queen.operator.controlplane;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

import java.nio.file.Path;

/**
 * JUnit extension handing tests the {@link ControlPlane} of this JVM: started by the first test
 * class that asks for it (as a parameter of a {@code @BeforeAll}, test or constructor), stopped when
 * the whole run ends. A control plane that cannot be built or started fails the test with the
 * reason; it never skips.
 */
public final class RealControlPlane implements ParameterResolver {
    private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(RealControlPlane.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == ControlPlane.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getRoot().getStore(STORE).getOrComputeIfAbsent(ControlPlane.class, key -> start(),
                ControlPlane.class);
    }

    private static ControlPlane start() {
        Path root = Path.of(System.getProperty("queen.repo.root", "..")).toAbsolutePath().normalize();
        Path workDir = Path.of("target", "control-plane", Long.toString(ProcessHandle.current().pid())).toAbsolutePath();
        try {
            ControlPlane plane = ControlPlane.start(root, workDir);
            System.out.printf("[control-plane] Kubernetes %s up at %s in %d ms (logs in %s)%n", plane.version(),
                    plane.apiServer(), plane.startTime().toMillis(), workDir);
            return plane;
        } catch (Exception e) {
            throw new IllegalStateException("the Kubernetes control plane could not start: " + e.getMessage(), e);
        }
    }
}
