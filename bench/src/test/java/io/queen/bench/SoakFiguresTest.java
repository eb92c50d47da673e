package io.queen.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SoakFiguresTest {
    @Test
    void growthIsMeasuredFromMinuteTenOrFromMinuteOneInAShortRun() {
        assertEquals(10, SoakFigures.baseMinute(60));
        assertEquals(10, SoakFigures.baseMinute(11));
        assertEquals(1, SoakFigures.baseMinute(10));
        assertEquals(1, SoakFigures.baseMinute(3));
    }

    @Test
    void growthInPercentOfTheBase() {
        assertEquals(10.0, SoakFigures.growthPercent(100, 110), 1e-9);
        assertEquals(-5.0, SoakFigures.growthPercent(200, 190), 1e-9);
        assertEquals(0.0, SoakFigures.growthPercent(150, 150), 1e-9);
    }

    @Test
    void anHourLongSoakIgnoresTheFirstNineMinutes() {
        List<Double> rss = new ArrayList<>();
        for (int m = 1; m <= 60; m++) {
            rss.add(m < 10 ? 50.0 + m * 10 : 140.0 + (m - 10) * 0.2); // warm-up growth, then a slow creep
        }
        assertEquals(140.0, rss.get(9), 1e-9);
        assertEquals(10.0 / 140 * 100, SoakFigures.growthPercent(rss), 1e-9);
        assertEquals(150.0, SoakFigures.steadyMax(rss), 1e-9);
    }

    @Test
    void aThreeMinuteSoakMeasuresFromTheFirstMinute() {
        List<Double> rss = List.of(100.0, 120.0, 115.0);
        assertEquals(15.0, SoakFigures.growthPercent(rss), 1e-9);
        assertEquals(120.0, SoakFigures.steadyMax(rss), 1e-9);
    }

    @Test
    void theShareAboveTheTargetCountsSamplesFromTheBaseMinuteOn() {
        List<Integer> over = new ArrayList<>();
        List<Integer> samples = new ArrayList<>();
        for (int m = 1; m <= 20; m++) {
            over.add(m < 10 ? 60 : 3); // over all through the warm-up, then 3 s a minute
            samples.add(m == 20 ? 30 : 60);
        }
        assertEquals(33.0 / (10 * 60 + 30) * 100, SoakFigures.steadySharePercentOver(over, samples), 1e-9);
        assertEquals(50.0, SoakFigures.steadySharePercentOver(List.of(30, 30), List.of(60, 60)), 1e-9);
    }
}
