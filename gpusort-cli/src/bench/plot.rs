//! The SVG plot: keys per second (log scale) against n (log2 scale), one line per series.
//!
//! Drawn with plotters' SVG backend and no font library: the SVG holds `<text>` elements that
//! the viewer sets in its own sans-serif, so nothing on the build or run machine needs fonts.

use super::peers::PeerRow;
use super::{Measurement, order_name};
use crate::keys::{DType, Order};
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters_backend::DrawingErrorKind;

/// One line of the plot. Made by [`series`].
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend's label, e.g. `bitonic u32 asc` or `cub_merge u32`.
    pub label: String,
    /// The sort: ours (`bitonic`) or a peer's (`cub_merge`); it picks the colour.
    pub name: String,
    /// The key type; it picks the marker.
    pub dtype: DType,
    /// The order of ours, `None` for a peer's (ascending). Ours ascending are drawn thick,
    /// the rest thin.
    pub order: Option<Order>,
    /// (n, keys per second), by n.
    pub points: Vec<(usize, f64)>,
}

/// One series per (sort, key type, order) of ours and per (peer, key type) of the peers', in
/// first-seen order. Labels name the key type only when there are several, and the order only
/// when our measurements have several.
///
/// # Examples
///
/// ```
/// use gpusort_cli::bench::{Algo, Measurement, peers::PeerRow, plot::series};
/// use gpusort::{DType, Order};
/// use gpusort_cli::timing::Timing;
///
/// let ours = |n: usize| Measurement {
///     algo: Algo::Bitonic,
///     dtype: DType::U32,
///     order: Order::Ascending,
///     n,
///     ms: Timing::of(vec![1.0]),
///     verified: true,
/// };
/// let cub = PeerRow { peer: "cub_merge".into(), dtype: DType::U32, n: 1024, ms_median: 0.5, correct: true };
/// let lines = series(&[ours(2048), ours(1024)], &[cub]);
/// assert_eq!(lines.len(), 2);
/// assert_eq!((lines[0].label.as_str(), lines[1].label.as_str()), ("bitonic", "cub_merge"));
/// assert_eq!(lines[0].points, [(1024, 1_024_000.0), (2048, 2_048_000.0)]);
/// ```
pub fn series(measurements: &[Measurement], peers: &[PeerRow]) -> Vec<Series> {
    let ours = measurements
        .iter()
        .map(|m| (m.algo.name(), m.dtype, Some(m.order), m.n, m.keys_per_s()));
    let theirs = peers
        .iter()
        .map(|p| (p.peer.as_str(), p.dtype, None, p.n, p.keys_per_s()));
    let mut all: Vec<Series> = Vec::new();
    for (name, dtype, order, n, keys_per_s) in ours.chain(theirs) {
        let same = |s: &&mut Series| s.name == name && s.dtype == dtype && s.order == order;
        match all.iter_mut().find(same) {
            Some(s) => s.points.push((n, keys_per_s)),
            None => all.push(Series {
                label: String::new(),
                name: name.to_string(),
                dtype,
                order,
                points: vec![(n, keys_per_s)],
            }),
        }
    }
    let several_dtypes = all.iter().any(|s| s.dtype != all[0].dtype);
    let orders: Vec<Order> = all.iter().filter_map(|s| s.order).collect();
    let several_orders = orders.iter().any(|&o| o != orders[0]);
    for s in &mut all {
        s.label = s.name.clone();
        if several_dtypes {
            s.label += &format!(" {}", s.dtype);
        }
        if let Some(order) = s.order.filter(|_| several_orders) {
            s.label += &format!(" {}", order_name(order));
        }
        s.points.sort_by_key(|&(n, _)| n);
    }
    all
}

/// The plot's title: the device, and the key type and order when there is only one of each
/// (the labels leave them out then).
///
/// # Examples
///
/// ```
/// use gpusort::{DType, Order};
/// use gpusort_cli::bench::plot::title;
///
/// assert_eq!(
///     title("NVIDIA H200", &[DType::U32], &[Order::Ascending]),
///     "Sort throughput on NVIDIA H200 (u32, asc)"
/// );
/// assert_eq!(title("CPU only", &[DType::U32, DType::F32], &[]), "Sort throughput on CPU only");
/// ```
pub fn title(device: &str, dtypes: &[DType], orders: &[Order]) -> String {
    let mut title = format!("Sort throughput on {device}");
    match (dtypes, orders) {
        ([dtype], [order]) => title += &format!(" ({dtype}, {})", order_name(*order)),
        ([dtype], _) => title += &format!(" ({dtype})"),
        (_, [order]) => title += &format!(" ({})", order_name(*order)),
        _ => {}
    }
    title
}

/// Why the plot could not be drawn: plotters' error, as text. Returned by [`svg`].
#[derive(Debug, thiserror::Error)]
#[error("drawing the plot: {0}")]
pub struct PlotError(String);

/// Size of the chart, in pixels (the legend beside it widens the SVG).
const WIDTH: u32 = 1100;
const HEIGHT: u32 = 640;
/// Legend text size and line pitch, in pixels; its column width follows the longest label.
const LEGEND_FONT: u32 = 16;
const LEGEND_PITCH: i32 = 20;

/// Distinct colours (Tableau 20: the ten strong ones, then their light tints), one per sort
/// name, reused in turn past twenty.
const COLOURS: [RGBColor; 20] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(174, 199, 232),
    RGBColor(255, 187, 120),
    RGBColor(152, 223, 138),
    RGBColor(255, 152, 150),
    RGBColor(197, 176, 213),
    RGBColor(196, 156, 148),
    RGBColor(247, 182, 210),
    RGBColor(199, 199, 199),
    RGBColor(219, 219, 141),
    RGBColor(158, 218, 229),
];

/// The plot as an SVG document: one coloured `<polyline>` per series (the axes and ticks are
/// black ones), and a legend beside the chart with one `<text>` label per series. A series'
/// colour says its sort, its marker its key type.
///
/// # Errors
/// [`PlotError`] if plotters fails (it does not for finite inputs).
///
/// # Examples
///
/// ```
/// use gpusort::DType;
/// use gpusort_cli::bench::plot::{Series, svg};
///
/// let line = Series {
///     label: "cub_merge".into(),
///     name: "cub_merge".into(),
///     dtype: DType::U32,
///     order: None,
///     points: vec![(1 << 16, 1.6e9), (1 << 20, 1.1e10)],
/// };
/// let doc = svg(&[line], "Sort throughput")?;
/// assert!(doc.starts_with("<svg") && doc.contains("cub_merge"));
/// # Ok::<(), gpusort_cli::bench::plot::PlotError>(())
/// ```
pub fn svg(series: &[Series], title: &str) -> Result<String, PlotError> {
    let mut out = String::new();
    draw(&mut out, series, title).map_err(|e| PlotError(e.to_string()))?;
    Ok(out)
}

fn draw(
    out: &mut String,
    series: &[Series],
    title: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    // Points a log scale can show; a zero time would give infinite keys per second.
    let shown = |s: &Series| -> Vec<(f64, f64)> {
        s.points
            .iter()
            .filter(|&&(n, k)| n > 0 && k.is_finite() && k > 0.0)
            .map(|&(n, k)| ((n as f64).log2(), k))
            .collect()
    };
    let all: Vec<(f64, f64)> = series.iter().flat_map(shown).collect();
    let (x_lo, x_hi) = bounds(all.iter().map(|p| p.0)).unwrap_or((10.0, 28.0));
    let (y_lo, y_hi) = bounds(all.iter().map(|p| p.1)).unwrap_or((1e6, 1e9));
    let x_range = (x_lo - 0.5)..(x_hi + 0.5);
    // Whole decades, so that the log axis always has labelled powers of ten.
    let y_range = 10f64.powf(y_lo.log10().floor())..10f64.powf((y_hi * 1.01).log10().ceil());

    // plotters' text layout without a font library guesses 0.7 em per character; the legend's
    // width follows its longest label by the same guess.
    let longest = series.iter().map(|s| s.label.chars().count()).max();
    let legend_width = 60 + longest.unwrap_or(0) as u32 * LEGEND_FONT * 6 / 10;

    let root = SVGBackend::with_string(out, (WIDTH + legend_width, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (chart_area, legend_area) = root.split_horizontally(WIDTH);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", 28))
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(90)
        .build_cartesian_2d(x_range, y_range.log_scale())?;
    chart
        .configure_mesh()
        .x_desc("n (keys)")
        .y_desc("keys per second")
        .x_labels(x_labels(x_lo, x_hi))
        .x_label_formatter(&|x| format!("2^{}", x.round()))
        .y_label_formatter(&|y| si(*y))
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 18))
        .draw()?;

    let mut names: Vec<&str> = Vec::new();
    for (i, s) in series.iter().enumerate() {
        let colour_index = names.iter().position(|&n| n == s.name).unwrap_or_else(|| {
            names.push(&s.name);
            names.len() - 1
        });
        let colour = COLOURS[colour_index % COLOURS.len()];
        let width = if s.order == Some(Order::Ascending) {
            2
        } else {
            1
        };
        let points = shown(s);
        chart.draw_series(LineSeries::new(points.clone(), colour.stroke_width(width)))?;
        chart.draw_series(points.into_iter().map(|p| marker(s.dtype, p, colour)))?;

        let y = 30 + i as i32 * LEGEND_PITCH;
        legend_area.draw(&Rectangle::new(
            [(8, y - width as i32 / 2), (36, y + 1)],
            colour.filled(),
        ))?;
        legend_area.draw(&marker(s.dtype, (22, y), colour))?;
        legend_area.draw(&Text::new(
            s.label.clone(),
            (46, y - LEGEND_FONT as i32 / 2),
            ("sans-serif", LEGEND_FONT),
        ))?;
    }
    root.present()?;
    Ok(())
}

/// The marker of a key type at a point: filled shapes, never a `<polyline>` (which would count
/// as a series line): u32 circle, f32 triangle, u64 square, i32 diamond, i64 cross, f64
/// upside-down triangle.
struct Marker<C> {
    at: C,
    dtype: DType,
    colour: RGBColor,
}

fn marker<C>(dtype: DType, at: C, colour: RGBColor) -> Marker<C> {
    Marker { at, dtype, colour }
}

impl<'b, C> PointCollection<'b, C> for &'b Marker<C> {
    type Point = &'b C;
    type IntoIter = std::iter::Once<&'b C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Marker<C> {
    fn draw<I: Iterator<Item = (i32, i32)>>(
        &self,
        mut points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = points.next() else {
            return Ok(());
        };
        let fill = self.colour.filled();
        let shifted = |offsets: &[(i32, i32)]| {
            offsets
                .iter()
                .map(|&(dx, dy)| (x + dx, y + dy))
                .collect::<Vec<_>>()
        };
        match self.dtype {
            DType::U32 => backend.draw_circle((x, y), 4, &fill, true),
            DType::F32 => backend.fill_polygon(shifted(&[(0, -5), (5, 4), (-5, 4)]), &fill),
            DType::U64 => backend.draw_rect((x - 4, y - 4), (x + 4, y + 4), &fill, true),
            DType::I32 => backend.fill_polygon(shifted(&[(0, -5), (5, 0), (0, 5), (-5, 0)]), &fill),
            DType::I64 => {
                let line = self.colour.stroke_width(2);
                backend.draw_line((x - 4, y - 4), (x + 4, y + 4), &line)?;
                backend.draw_line((x - 4, y + 4), (x + 4, y - 4), &line)
            }
            DType::F64 => backend.fill_polygon(shifted(&[(-5, -4), (5, -4), (0, 5)]), &fill),
        }
    }
}

/// Smallest and largest of `values`, or `None` if there are none.
fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// How many x labels to ask plotters for: one per whole log2 size from `lo` to `hi`, or fewer
/// past 16 (plotters then labels every second one), so that it never picks half steps.
fn x_labels(lo: f64, hi: f64) -> usize {
    ((hi - lo).round() as usize + 1).min(16)
}

/// `y` with an SI prefix: 1.5M, 20G.
fn si(y: f64) -> String {
    let (scaled, prefix) = match y {
        _ if y >= 1e12 => (y / 1e12, "T"),
        _ if y >= 1e9 => (y / 1e9, "G"),
        _ if y >= 1e6 => (y / 1e6, "M"),
        _ if y >= 1e3 => (y / 1e3, "k"),
        _ => (y, ""),
    };
    let text = format!("{scaled:.1}");
    format!("{}{prefix}", text.trim_end_matches(".0"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Algo;
    use crate::timing::Timing;

    fn measurement(algo: Algo, dtype: DType, order: Order, n: usize, ms: f64) -> Measurement {
        Measurement {
            algo,
            dtype,
            order,
            n,
            ms: Timing {
                median: ms,
                min: ms,
                max: ms,
            },
            verified: true,
        }
    }

    fn peer(name: &str, dtype: DType, n: usize) -> PeerRow {
        PeerRow {
            peer: name.into(),
            dtype,
            n,
            ms_median: 0.1,
            correct: true,
        }
    }

    #[test]
    fn one_series_per_sort_key_type_and_order_labelled_by_what_varies() {
        let measured = [
            measurement(Algo::Bitonic, DType::U32, Order::Ascending, 2048, 1.0),
            measurement(Algo::Bitonic, DType::U32, Order::Ascending, 1024, 1.0),
            measurement(Algo::CpuStd, DType::U32, Order::Ascending, 1024, 2.0),
        ];
        let s = series(&measured, &[]);
        let labels: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["bitonic", "cpu_std"]);
        assert_eq!(s[0].points, [(1024, 1024e3), (2048, 2048e3)], "sorted by n");

        let mixed = [
            measurement(Algo::Bitonic, DType::U32, Order::Ascending, 1024, 1.0),
            measurement(Algo::Bitonic, DType::F64, Order::Descending, 1024, 1.0),
        ];
        let s = series(
            &mixed,
            &[
                peer("cub_merge", DType::U32, 1024),
                peer("cub_merge", DType::U32, 2048),
            ],
        );
        let labels: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            ["bitonic u32 asc", "bitonic f64 desc", "cub_merge u32"]
        );
        assert_eq!(
            (s[0].order, s[2].order),
            (Some(Order::Ascending), None),
            "peers have none"
        );
        assert_eq!(s[2].points.len(), 2);
    }

    #[test]
    fn svg_has_one_polyline_and_one_label_per_series() {
        let measured: Vec<_> = (10..=14)
            .flat_map(|l| {
                [
                    measurement(Algo::Bitonic, DType::U32, Order::Ascending, 1 << l, 0.05),
                    measurement(Algo::CpuRayon, DType::U32, Order::Ascending, 1 << l, 0.5),
                    measurement(Algo::CpuRayon, DType::F32, Order::Ascending, 1 << l, 0.6),
                ]
            })
            .collect();
        let s = series(&measured, &[peer("cub_radix", DType::U32, 1 << 12)]);
        assert_eq!(s.len(), 4);
        let svg = svg(&s, "Sort throughput").expect("draws");
        assert!(svg.starts_with("<svg"), "{}", &svg[..100]);
        assert_eq!(series_lines(&svg), s.len(), "{svg}");
        for label in [
            "bitonic u32",
            "cpu_rayon u32",
            "cpu_rayon f32",
            "cub_radix u32",
            "Sort throughput",
            "2^12",
            "keys per second",
        ] {
            assert!(svg.contains(label), "no {label:?} in the SVG");
        }
    }

    #[test]
    fn svg_of_nothing_is_an_empty_chart() {
        let svg = svg(&[], "nothing").expect("draws");
        assert_eq!(series_lines(&svg), 0);
    }

    /// Polylines not drawn in black: the series'.
    fn series_lines(svg: &str) -> usize {
        svg.lines()
            .filter(|l| l.starts_with("<polyline") && !l.contains(r##"stroke="#000000""##))
            .count()
    }

    #[test]
    fn title_names_what_the_labels_leave_out() {
        let asc = [Order::Ascending];
        assert_eq!(
            title("H200", &[DType::U32], &asc),
            "Sort throughput on H200 (u32, asc)"
        );
        assert_eq!(
            title("H200", &[DType::U32, DType::F32], &asc),
            "Sort throughput on H200 (asc)"
        );
        assert_eq!(
            title(
                "CPU only",
                &[DType::F64],
                &[Order::Ascending, Order::Descending]
            ),
            "Sort throughput on CPU only (f64)"
        );
    }

    #[test]
    fn ticks_and_prefixes() {
        assert_eq!(x_labels(10.0, 12.0), 3);
        assert_eq!(x_labels(10.0, 28.0), 16);
        assert_eq!(si(1.5e9), "1.5G");
        assert_eq!(si(2e6), "2M");
        assert_eq!(si(512.0), "512");
    }
}
