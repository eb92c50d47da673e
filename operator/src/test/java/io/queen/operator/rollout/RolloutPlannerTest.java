package io.queen.operator.rollout;

import io.queen.operator.rollout.PodState.Stuck;
import io.queen.operator.rollout.RolloutStep.AwaitPodReady;
import io.queen.operator.rollout.RolloutStep.AwaitSchemaJob;
import io.queen.operator.rollout.RolloutStep.Complete;
import io.queen.operator.rollout.RolloutStep.DeletePod;
import io.queen.operator.rollout.RolloutStep.Halt;
import io.queen.operator.rollout.RolloutStep.RecordSchemaApplied;
import io.queen.operator.rollout.RolloutStep.RequestRestart;
import io.queen.operator.rollout.RolloutStep.RunSchemaJob;
import io.queen.operator.rollout.RolloutStep.SchemaJobFailed;
import io.queen.operator.rollout.RolloutStep.Wait;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The planner, one row per situation: state in, the single next step out. */
class RolloutPlannerTest {
    private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");
    private static final Duration TIMEOUT = Duration.ofMinutes(5);
    private static final String OLD = "rev-old";
    private static final String NEW = "rev-new";
    private static final String IMAGE = "queen-broker:2";

    static Stream<Arguments> cases() {
        return Stream.of(
                row("a requested restart not yet in the template is copied there first",
                        state().restart("t1", null).pods(ready(0, NEW), ready(1, NEW)),
                        is(new RequestRestart("t1"))),
                row("a restart already in the template is not requested again",
                        state().restart("t1", "t1").pods(ready(0, NEW), ready(1, NEW)),
                        is(new Complete(NEW))),
                row("a new image runs the schema Job before any pod is touched",
                        state().schema(IMAGE, "queen-broker:1", SchemaJobState.ABSENT).pods(ready(0, OLD), ready(1, OLD)),
                        is(new RunSchemaJob(IMAGE))),
                row("a running schema Job is waited for",
                        state().schema(IMAGE, "queen-broker:1", SchemaJobState.RUNNING).pods(ready(0, OLD), ready(1, OLD)),
                        is(new AwaitSchemaJob(IMAGE))),
                row("a failed schema Job blocks the roll, even with a stuck pod",
                        state().schema(IMAGE, "queen-broker:1", SchemaJobState.FAILED)
                                .pods(ready(0, OLD), stuck(1, OLD, Stuck.CRASH_LOOP)),
                        is(new SchemaJobFailed(IMAGE))),
                row("a succeeded schema Job is recorded before pods roll",
                        state().schema(IMAGE, "queen-broker:1", SchemaJobState.SUCCEEDED).pods(ready(0, OLD)),
                        is(new RecordSchemaApplied(IMAGE))),
                row("the first install applies the schema while no broker is ready",
                        state().schema(IMAGE, null, SchemaJobState.ABSENT).pods(unready(0, NEW), unready(1, NEW)),
                        is(new RunSchemaJob(IMAGE))),
                row("a template without a broker image skips the schema gate",
                        state().schema(null, null, SchemaJobState.ABSENT).pods(ready(0, NEW)),
                        is(new Complete(NEW))),
                row("every pod at the update revision is a complete roll",
                        state().pods(ready(0, NEW), ready(1, NEW), ready(2, NEW)),
                        is(new Complete(NEW))),
                row("with every broker ready the highest-ordinal outdated pod goes first",
                        state().pods(ready(0, OLD), ready(1, OLD), ready(2, OLD)),
                        deletes("broker-2")),
                row("the deleted pod not yet re-created is waited for",
                        state().pods(ready(0, OLD), ready(1, OLD)).inFlight("broker-2", NEW, NOW.minusSeconds(10)),
                        is(new AwaitPodReady("broker-2"))),
                row("the re-created pod not yet ready within the timeout is waited for",
                        state().pods(ready(0, OLD), ready(1, OLD), unready(2, NEW)).inFlight("broker-2", NEW, NOW.minusSeconds(60)),
                        is(new AwaitPodReady("broker-2"))),
                row("the re-created pod not ready past the timeout halts the roll",
                        state().pods(ready(0, OLD), ready(1, OLD), unready(2, NEW)).inFlight("broker-2", NEW, NOW.minus(TIMEOUT)),
                        halts("broker-2", "did not become Ready")),
                row("a crash-looping re-created pod halts instead of taking the next broker",
                        state().pods(ready(0, OLD), ready(1, OLD), stuck(2, NEW, Stuck.CRASH_LOOP))
                                .inFlight("broker-2", NEW, NOW.minus(TIMEOUT).minusSeconds(1)),
                        halts("broker-2", "CRASH_LOOP")),
                row("a deleted pod never re-created halts past the timeout",
                        state().pods(ready(0, OLD), ready(1, OLD)).inFlight("broker-2", NEW, NOW.minus(TIMEOUT)),
                        halts("broker-2", "was not re-created")),
                row("once the re-created pod is ready the next lower ordinal goes",
                        state().pods(ready(0, OLD), ready(1, OLD), ready(2, NEW)).inFlight("broker-2", NEW, NOW.minusSeconds(30)),
                        deletes("broker-1")),
                row("a halt for an older revision is lifted by a new template: the stuck pod is replaced first",
                        state().pods(ready(0, OLD), ready(1, OLD), stuck(2, "rev-older", Stuck.CRASH_LOOP))
                                .inFlight("broker-2", "rev-older", NOW.minus(TIMEOUT).minusSeconds(60)),
                        deletes("broker-2")),
                row("a stuck outdated pod goes before healthy higher ordinals",
                        state().pods(stuck(0, OLD, Stuck.CRASH_LOOP), ready(1, OLD), ready(2, OLD)),
                        deletes("broker-0")),
                row("an unschedulable outdated pod goes first even while another broker is down",
                        state().pods(ready(0, OLD), unready(1, NEW), stuck(2, OLD, Stuck.UNSCHEDULABLE)),
                        deletes("broker-2")),
                row("an image that cannot be pulled on an outdated pod is stuck too",
                        state().pods(ready(0, OLD), stuck(1, OLD, Stuck.IMAGE_PULL)),
                        deletes("broker-1")),
                row("an outdated pod unready for too long is stuck",
                        state().pods(ready(0, OLD), stuck(1, OLD, Stuck.UNREADY_TOO_LONG), ready(2, OLD)),
                        deletes("broker-1")),
                row("never two brokers down: an unready broker makes the roll wait",
                        state().pods(ready(0, OLD), unready(1, NEW), ready(2, OLD)),
                        waits("broker-1")),
                row("never two brokers down: a missing broker makes the roll wait",
                        state().pods(ready(0, OLD), ready(2, NEW)),
                        waits("2 of 3")),
                row("a terminating pod makes the roll wait",
                        state().pods(ready(0, OLD), ready(1, OLD), terminating(2, OLD)),
                        waits("terminating"))
        );
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void theNextStepIsTheSafeOne(StateBuilder state, Predicate<RolloutStep> expected) {
        RolloutStep step = RolloutPlanner.next(state.build());
        assertTrue(expected.test(step), "unexpected step " + step);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void thePlannerIsPure(StateBuilder state, Predicate<RolloutStep> ignored) {
        assertEquals(RolloutPlanner.next(state.build()), RolloutPlanner.next(state.build()));
    }

    private static Arguments row(String name, StateBuilder state, Predicate<RolloutStep> expected) {
        return Arguments.of(Named.of(name, state), expected);
    }

    private static Predicate<RolloutStep> is(RolloutStep step) {
        return step::equals;
    }

    private static Predicate<RolloutStep> deletes(String pod) {
        return s -> s instanceof DeletePod d && d.pod().equals(pod);
    }

    private static Predicate<RolloutStep> halts(String pod, String why) {
        return s -> s instanceof Halt h && h.pod().equals(pod) && h.reason().contains(why);
    }

    private static Predicate<RolloutStep> waits(String why) {
        return s -> s instanceof Wait w && w.reason().contains(why);
    }

    private static PodState ready(int ordinal, String revision) {
        return new PodState("broker-" + ordinal, ordinal, revision, true, false, Stuck.NO, NOW.minusSeconds(3600));
    }

    private static PodState unready(int ordinal, String revision) {
        return new PodState("broker-" + ordinal, ordinal, revision, false, false, Stuck.NO, NOW.minusSeconds(5));
    }

    private static PodState stuck(int ordinal, String revision, Stuck why) {
        return new PodState("broker-" + ordinal, ordinal, revision, false, false, why, NOW.minusSeconds(600));
    }

    private static PodState terminating(int ordinal, String revision) {
        return new PodState("broker-" + ordinal, ordinal, revision, true, true, Stuck.NO, NOW.minusSeconds(3600));
    }

    private static StateBuilder state() {
        return new StateBuilder();
    }

    /** A StatefulSet of 3 brokers at update revision NEW, schema applied, no restart, nothing in flight. */
    static final class StateBuilder {
        private String schemaKey = IMAGE;
        private String schemaApplied = IMAGE;
        private SchemaJobState job = SchemaJobState.ABSENT;
        private String restartRequested;
        private String restartApplied;
        private final List<PodState> pods = new ArrayList<>();
        private InFlight inFlight;

        StateBuilder schema(String key, String applied, SchemaJobState jobState) {
            this.schemaKey = key;
            this.schemaApplied = applied;
            this.job = jobState;
            return this;
        }

        StateBuilder restart(String requested, String applied) {
            this.restartRequested = requested;
            this.restartApplied = applied;
            return this;
        }

        StateBuilder pods(PodState... states) {
            pods.addAll(List.of(states));
            return this;
        }

        StateBuilder inFlight(String pod, String revision, Instant at) {
            this.inFlight = new InFlight(pod, revision, at);
            return this;
        }

        RolloutState build() {
            return new RolloutState(3, NEW, schemaKey, schemaApplied, job, restartRequested, restartApplied,
                    List.copyOf(pods), Optional.ofNullable(inFlight), NOW, TIMEOUT);
        }

        @Override
        public String toString() {
            return build().toString();
        }
    }
}
