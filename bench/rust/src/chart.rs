//! SVG charts written by hand: latency against percentile, one line per series.

use std::fmt::Write as _;

use crate::stats::Latencies;

/// The percentiles on the horizontal axis: evenly spaced in "nines" (−log10(1 − q)), so 90 %,
/// 99 % and 99.9 % are equally far apart and the tail gets room.
const NINES_MAX: f64 = 3.0;

/// Colours for successive series.
const COLOURS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
];

/// How many percentiles a series is drawn through, evenly spaced in nines from 0 to 99.9 %.
pub const POINTS: usize = 301;

/// The nines (−log10(1 − q)) of the `step`-th point.
fn nines(step: usize) -> f64 {
    NINES_MAX * step as f64 / (POINTS - 1) as f64
}

/// `latencies` at each of the [`POINTS`] percentiles a chart draws, in microseconds: what a
/// benchmark prints so that its chart can be drawn again from its output.
pub fn quantile_grid(latencies: &Latencies) -> Vec<u32> {
    (0..POINTS)
        .map(|step| latencies.quantile_us(1.0 - 10f64.powf(-nines(step))))
        .collect()
}

/// An SVG of latency (logarithmic, milliseconds) against percentile (0 to 99.9 %) for each
/// `(name, grid)` series, the grid as [`quantile_grid`] makes it.
pub fn latency_percentiles(title: &str, series: &[(String, Vec<u32>)]) -> String {
    const WIDTH: f64 = 760.0;
    const HEIGHT: f64 = 440.0;
    const LEFT: f64 = 70.0;
    const RIGHT: f64 = 170.0;
    const TOP: f64 = 40.0;
    const BOTTOM: f64 = 50.0;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;

    let all_us = series
        .iter()
        .flat_map(|(_, grid)| [grid.first(), grid.last()])
        .flatten()
        .copied();
    let (mut low, mut high) = (f64::MAX, 0.0_f64);
    for us in all_us {
        low = low.min(f64::from(us.max(1)));
        high = high.max(f64::from(us.max(1)));
    }
    if low > high {
        (low, high) = (1.0, 10.0);
    }
    // Whole decades of milliseconds around the data.
    let low_dec = (low / 1000.0).log10().floor();
    let high_dec = ((high / 1000.0).log10().ceil()).max(low_dec + 1.0);
    let y = |us: f64| {
        let dec = (us.max(1.0) / 1000.0).log10();
        TOP + plot_h * (1.0 - (dec - low_dec) / (high_dec - low_dec))
    };
    let x = |nines: f64| LEFT + plot_w * (nines / NINES_MAX);

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"##
    );
    let _ = writeln!(
        svg,
        r##"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/><text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"##,
        LEFT + plot_w / 2.0,
        escape(title)
    );
    // Horizontal grid: each decade and its 2× and 5×.
    let mut decade = low_dec;
    while decade <= high_dec {
        for (factor, major) in [(1.0, true), (2.0, false), (5.0, false)] {
            let ms = 10f64.powf(decade) * factor;
            let us = ms * 1000.0;
            if (us / 1000.0).log10() > high_dec + 1e-9 {
                continue;
            }
            let yy = y(us);
            let stroke = if major { "#bbb" } else { "#eee" };
            let _ = writeln!(
                svg,
                r##"<line x1="{LEFT}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" stroke="{stroke}"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + plot_w,
                LEFT - 6.0,
                yy + 4.0,
                format_ms(ms)
            );
        }
        decade += 1.0;
    }
    for (nines, label) in [
        (0.0, "0%"),
        (0.301, "50%"),
        (1.0, "90%"),
        (2.0, "99%"),
        (3.0, "99.9%"),
    ] {
        let xx = x(nines);
        let _ = writeln!(
            svg,
            r##"<line x1="{xx:.1}" x2="{xx:.1}" y1="{TOP}" y2="{}" stroke="#ddd"/><text x="{xx:.1}" y="{}" text-anchor="middle">{label}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 18.0
        );
    }
    let _ = writeln!(
        svg,
        r##"<text x="{}" y="{}" text-anchor="middle">percentile</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">latency (log scale)</text>"##,
        LEFT + plot_w / 2.0,
        HEIGHT - 10.0,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    for (index, (name, grid)) in series.iter().enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        let mut points = String::new();
        for (step, &us) in grid.iter().enumerate().take(POINTS) {
            let _ = write!(points, "{:.1},{:.1} ", x(nines(step)), y(f64::from(us)));
        }
        let _ = writeln!(
            svg,
            r##"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"##,
            points.trim_end()
        );
        let ly = TOP + 10.0 + 20.0 * index as f64;
        let lx = LEFT + plot_w + 15.0;
        let _ = writeln!(
            svg,
            r##"<line x1="{lx}" x2="{}" y1="{ly}" y2="{ly}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{}</text>"##,
            lx + 20.0,
            lx + 26.0,
            ly + 4.0,
            escape(name)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

fn format_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{} s", ms / 1000.0)
    } else if ms >= 1.0 {
        format!("{ms} ms")
    } else {
        format!("{} µs", (ms * 1000.0).round())
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_one_line_per_series_with_escaped_names() {
        let series = vec![
            (
                "a<b".to_owned(),
                quantile_grid(&Latencies::new((100..5000).collect())),
            ),
            (
                "c".to_owned(),
                quantile_grid(&Latencies::new(vec![200; 10])),
            ),
        ];
        let svg = latency_percentiles("t & u", &series);
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a&lt;b") && svg.contains("t &amp; u"));
    }

    #[test]
    fn the_grid_runs_from_the_fastest_call_to_the_999th_permille() {
        let grid = quantile_grid(&Latencies::new((1..=10_000).collect()));
        assert_eq!(grid.len(), POINTS);
        assert_eq!(grid[0], 1);
        assert_eq!(grid[POINTS - 1], 9_990);
        assert!(grid.windows(2).all(|pair| pair[0] <= pair[1]));
    }
}
